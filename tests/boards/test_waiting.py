"""Why a task waits: the task detail's `waiting` and the board's."""

import pytest
from django.db import connection

from agents import services as sessions
from boards import admission, structure
from boards.services import task_block
from tests.concurrency import committed_after
from tests.factories import MembershipFactory, StepFactory, UserFactory
from workflows.models import OnFull, Role, StepGroup, StepKind, WorkflowStep

pytestmark = pytest.mark.django_db


@pytest.fixture
def chain(workflow):
    """Backlog -> In Progress (limit 1, pulls Backlog) -> Review (limit 1, queue mode)."""
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind=StepKind.BACKLOG)
    doing = StepFactory(workflow=workflow, name="In Progress", position=1, wip_limit=1, pull_from_step=backlog)
    review = StepFactory(workflow=workflow, name="Review", position=2, wip_limit=1, on_full=OnFull.QUEUE)
    return backlog, doing, review


def create(step, owner, title, **fields):
    return admission.task_create(workflow=step.workflow, step=step, actor=owner, title=title, **fields).task


def detail(api, task):
    response = api.get(f"/api/v1/tasks/{task.pk}/")
    assert response.status_code == 200
    return response.json()["waiting"]


def board_waiting(api, workflow):
    board = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()
    return {t["title"]: t["waiting"] for step in board["steps"] for t in step["tasks"]}


def test_a_queued_task_says_its_place_in_the_queue_and_what_holds_it(chain, owner, api):
    _, _, review = chain
    create(review, owner, "in review")
    create(review, owner, "first waiting")
    second = create(review, owner, "second waiting")

    assert detail(api, second) == {
        "state": "queued",
        "position": 2,
        "step": {"id": str(review.pk), "name": "Review"},
        "held_by": [{"scope": "step", "id": str(review.pk), "name": "Review", "limit": 1, "occupied": 1}],
        "skipped_because": None,
    }
    assert board_waiting(api, review.workflow) == {
        "in review": None,
        "first waiting": {"state": "queued", "position": 1},
        "second waiting": {"state": "queued", "position": 2},
    }


def test_a_feeder_task_says_its_place_in_the_pull_order_and_why_it_is_skipped(chain, owner, api):
    backlog, doing, _ = chain
    create(doing, owner, "working")
    blocked = create(backlog, owner, "blocked one")
    task_block(task=blocked, actor=owner, reason="waiting on ops")
    agent = create(backlog, owner, "agent at work")
    sessions.session_start(task=agent, actor=owner)
    next_up = create(backlog, owner, "next")
    urgent = create(backlog, owner, "urgent", class_of_service="expedite")

    held = [{"scope": "step", "id": str(doing.pk), "name": "In Progress", "limit": 1, "occupied": 1}]
    in_progress = {"id": str(doing.pk), "name": "In Progress"}
    assert detail(api, urgent) == {
        "state": "waiting_for_pull",
        "position": 1,  # expedite work is pulled first
        "step": in_progress,
        "held_by": held,
        "skipped_because": None,
    }
    assert detail(api, next_up)["position"] == 2
    assert detail(api, blocked) == {  # its place once unblocked: after the expedite task
        "state": "waiting_for_pull",
        "position": 2,
        "step": in_progress,
        "held_by": held,
        "skipped_because": "blocked",
    }
    assert detail(api, agent)["skipped_because"] == "agent_running"
    assert board_waiting(api, doing.workflow) == {
        "working": None,
        "blocked one": None,
        "agent at work": None,
        "next": {"state": "waiting_for_pull", "position": 2},
        "urgent": {"state": "waiting_for_pull", "position": 1},
    }


def test_a_task_whose_assignee_is_full_is_skipped_and_the_group_holds_the_rest(workflow, owner, api):
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind=StepKind.BACKLOG)
    doing = StepFactory(workflow=workflow, name="In Progress", position=1, pull_from_step=backlog)
    review = StepFactory(workflow=workflow, name="Review", position=2)
    development = StepGroup.objects.create(workflow=workflow, name="Development", wip_limit=2)
    for step in (doing, review):
        step.group = development
        step.save(update_fields=["group"])
    alice = UserFactory(username="alice")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER, wip_limit=1)
    create(doing, owner, "alice's", assignee_id=alice.pk)
    create(review, owner, "in review")
    hers = create(backlog, owner, "also alice's", assignee_id=alice.pk)
    other = create(backlog, owner, "anyone's")

    group = {"scope": "group", "id": str(development.pk), "name": "Development", "limit": 2, "occupied": 2}
    person = {"scope": "person", "id": str(alice.pk), "name": "alice", "limit": 1, "occupied": 1}
    assert detail(api, hers) == {
        "state": "waiting_for_pull",
        "position": 1,
        "step": {"id": str(doing.pk), "name": "In Progress"},
        "held_by": [group, person],
        "skipped_because": "assignee_full",
    }
    assert detail(api, other)["position"] == 1
    assert detail(api, other)["held_by"] == [group]


def test_a_task_nobody_waits_for_has_no_waiting(chain, owner, api):
    _, doing, _ = chain
    working = create(doing, owner, "working")
    assert detail(api, working) is None


# Collected on PostgreSQL only: on SQLite a writer waits for the read's IMMEDIATE transaction,
# so nothing can commit between its queries.
if connection.vendor == "postgresql":

    @pytest.mark.django_db(transaction=True)
    def test_the_detail_shows_one_board_though_its_step_is_deleted_between_its_queries(api, owner, chain):
        # Given a task waiting in Backlog behind a full In Progress, and its detail being read
        backlog, doing, review = chain
        create(backlog, owner, "busy")
        waiting = create(backlog, owner, "waiting")

        def delete_the_step():
            structure.step_delete(step=backlog, actor=owner, move_tasks_to=review)

        # When the task's step is deleted (its tasks moved on) just after the task was read
        with committed_after('FROM "boards_task"', delete_the_step) as deleted:
            response = api.get(f"/api/v1/tasks/{waiting.pk}/")

        # Then the detail answers from the board as it was when the read began
        assert deleted
        assert response.status_code == 200
        assert response.json()["step_id"] == str(backlog.pk)
        assert response.json()["waiting"]["state"] == "waiting_for_pull"
        assert not WorkflowStep.objects.filter(pk=backlog.pk).exists()
