"""Expedite: an expedite task entering an active step is admitted past a
full step, group or assignee while the board holds fewer than `expedite_limit` expedite
tasks in active steps (an `expedited` event); past that it is judged like any other; marking
a task expedite past the limit is refused; pulls take expedite candidates first."""

import pytest

from boards import admission
from boards.models import EventKind, Priority, Task, TaskEvent
from boards.services import task_update
from common.errors import WipLimitReached
from tests.conftest import board_state
from tests.factories import MembershipFactory, StepFactory, UserFactory
from workflows.models import Role, StepGroup, Workflow, WorkflowStep

EXPEDITE = {"class_of_service": "expedite"}


def full(doing, make_task):
    """In Progress (limit 2) holds two standard tasks."""
    for title in ("one", "two"):
        make_task(doing, title)


def kinds(task) -> list:
    return list(TaskEvent.objects.filter(task_id=task.pk).values_list("kind", flat=True))


class TestPastTheLimits:
    def test_past_a_full_step(self, board, make_task):
        _, doing, _ = board
        full(doing, make_task)

        urgent = make_task(doing, "urgent", **EXPEDITE)

        assert (urgent.step, urgent.admitted) == (doing, True)
        assert kinds(urgent) == [EventKind.EXPEDITED]

    def test_past_a_full_group(self, board, make_task):
        _, doing, _ = board
        review = StepFactory(workflow=doing.workflow, name="Review", position=3)
        group = StepGroup.objects.create(workflow=doing.workflow, name="Development", wip_limit=1)
        WorkflowStep.objects.filter(pk__in=[doing.pk, review.pk]).update(group=group)
        make_task(review, "in review")

        urgent = make_task(doing, "urgent", **EXPEDITE)

        assert kinds(urgent) == [EventKind.EXPEDITED]

    def test_past_a_full_assignee(self, board, make_task, owner):
        backlog, doing, _ = board
        alice = UserFactory(username="alice")
        MembershipFactory(workspace=doing.workflow.workspace, user=alice, role=Role.MEMBER, wip_limit=1)
        make_task(doing, "hers", assignee_id=alice.pk)
        doing.pull_from_step = None
        doing.save()
        urgent = make_task(backlog, "urgent", assignee_id=alice.pk, **EXPEDITE)

        admission.task_move(task=urgent, to_step=doing, actor=owner)

        assert Task.objects.get(pk=urgent.pk).step == doing
        assert kinds(urgent) == [EventKind.CREATED, EventKind.EXPEDITED]

    def test_past_the_allowance_an_expedite_task_is_judged_like_any_other(self, board, make_task, api):
        _, doing, _ = board
        full(doing, make_task)
        make_task(doing, "first urgent", **EXPEDITE)  # the board's one (expedite_limit 1)
        before = board_state(doing.workflow)

        refused = api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "second", **EXPEDITE}, format="json")

        assert refused.status_code == 409
        assert (refused.json()["scope"], refused.json()["occupied"]) == ("step", 3)
        assert board_state(doing.workflow) == before

    def test_a_room_with_space_admits_an_expedite_task_plainly(self, board, make_task):
        _, doing, _ = board

        urgent = make_task(doing, "urgent", **EXPEDITE)

        assert kinds(urgent) == [EventKind.CREATED]

    def test_the_allowance_counts_active_steps_only(self, board, make_task):
        backlog, doing, done = board
        doing.pull_from_step = None
        doing.save()
        make_task(backlog, "urgent, not started", **EXPEDITE)
        make_task(done, "urgent, finished", **EXPEDITE)
        full(doing, make_task)

        urgent = make_task(doing, "urgent", **EXPEDITE)

        assert kinds(urgent) == [EventKind.EXPEDITED]


class TestMarking:
    def test_marking_past_the_limit_is_refused_and_leaves_nothing(self, board, make_task, api):
        _, doing, _ = board
        make_task(doing, "urgent", **EXPEDITE)
        task = make_task(doing, "standard")
        before = board_state(doing.workflow)

        refused = api.patch(f"/api/v1/tasks/{task.pk}/", EXPEDITE, format="json")

        assert refused.status_code == 409
        assert refused.json() == {
            "code": "wip_limit_reached",
            "scope": "expedite",
            "limit": 1,
            "occupied": 1,
            "detail": "This board already has 1 expedite task in progress (limit 1).",
        }
        assert Task.objects.get(pk=task.pk).class_of_service == "standard"
        assert board_state(doing.workflow) == before

    def test_marking_within_the_limit_is_recorded_and_shown(self, board, make_task, api):
        _, doing, _ = board
        task = make_task(doing, "standard")

        marked = api.patch(f"/api/v1/tasks/{task.pk}/", EXPEDITE, format="json")

        assert (marked.status_code, marked.json()["class_of_service"]) == (200, "expedite")
        assert kinds(task)[-1] == EventKind.CLASSIFIED

    def test_a_task_waiting_outside_the_active_steps_may_be_marked(self, board, make_task, owner):
        backlog, doing, _ = board
        doing.pull_from_step = None
        doing.save()
        make_task(doing, "urgent", **EXPEDITE)
        waiting = make_task(backlog, "waiting")

        task_update(task=waiting, actor=owner, class_of_service="expedite")

        assert Task.objects.get(pk=waiting.pk).class_of_service == "expedite"

    def test_an_unknown_class_is_a_400(self, board, make_task, api):
        backlog, _, _ = board
        task = make_task(backlog, "a")
        created = api.post(
            "/api/v1/tasks/", {"step_id": str(backlog.pk), "title": "b", "class_of_service": "urgent"}, format="json"
        )
        patched = api.patch(f"/api/v1/tasks/{task.pk}/", {"class_of_service": "urgent"}, format="json")
        for response in (created, patched):
            assert response.status_code == 400
            assert set(response.json()["errors"]) == {"class_of_service"}


def test_expedite_candidates_are_pulled_first(board, make_task, owner):
    backlog, doing, done = board
    full(doing, make_task)
    first = make_task(backlog, "first in line", priority=Priority.CRITICAL)
    urgent = make_task(backlog, "urgent", **EXPEDITE)
    leaving = Task.objects.filter(step=doing).first()

    admission.task_move(task=leaving, to_step=done, actor=owner)

    assert (Task.objects.get(pk=urgent.pk).step, Task.objects.get(pk=first.pk).step) == (doing, backlog)


class TestTheBoardsLimit:
    def test_expedite_limit_is_read_and_written_through_the_workflow_api(self, workflow, api, broadcasts):
        url = f"/api/v1/workflows/{workflow.pk}/"
        assert api.get(url).json()["expedite_limit"] == 1
        before = Workflow.objects.get(pk=workflow.pk).version

        messages = broadcasts(workflow, lambda: api.patch(url, {"expedite_limit": 3}, format="json"))

        assert Workflow.objects.get(pk=workflow.pk).expedite_limit == 3
        assert [(m["type"], m["version"], m["workflow"]["expedite_limit"]) for m in messages] == [
            ("workflow.updated", before + 1, 3)
        ]

    @pytest.mark.parametrize("value", [-1, 100_001, "one"])
    def test_expedite_limit_is_a_bounded_whole_number(self, workflow, api, value):
        response = api.patch(f"/api/v1/workflows/{workflow.pk}/", {"expedite_limit": value}, format="json")
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {"expedite_limit"}

    def test_a_zero_limit_means_no_expedite_overrides(self, board, make_task):
        _, doing, _ = board
        Workflow.objects.filter(pk=doing.workflow_id).update(expedite_limit=0)
        full(doing, make_task)

        with pytest.raises(WipLimitReached) as refused:
            make_task(doing, "urgent", **EXPEDITE)

        assert refused.value.scope == "step"

    def test_a_new_workflow_may_set_it(self, workflow, api):
        created = api.post(
            "/api/v1/workflows/",
            {"workspace_id": str(workflow.workspace_id), "name": "Ops", "expedite_limit": 2},
            format="json",
        )
        assert (created.status_code, created.json()["expedite_limit"]) == (201, 2)
