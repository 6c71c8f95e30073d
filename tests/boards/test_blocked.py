"""Blocked tasks: a blocked task keeps its slot, is never pulled, and
unblocking it lets the limited steps it feeds fill in the same change."""

import pytest

from boards import admission
from boards.models import EventKind, Task, TaskEvent
from boards.services import task_block, task_unblock
from common.errors import Conflict, Invalid, WipLimitReached
from tests import factories
from tests.boards.settling import unsettled
from tests.concurrency import race, rounds
from tests.conftest import board_state, member_client
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role, Workflow


def titles(step):
    return list(Task.objects.occupying().filter(step=step).in_board_order().values_list("title", flat=True))


def version(workflow) -> int:
    return Workflow.objects.get(pk=workflow.pk).version


def fresh(task) -> Task:
    return Task.objects.get(pk=task.pk)


# --- the services ------------------------------------------------------------------------


def test_blocking_records_the_reason_and_the_time(board, make_task, owner):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    before = version(backlog.workflow)

    blocked = task_block(task=task, actor=owner, reason="waiting on ops")

    task = fresh(task)
    assert (task.blocked_reason, task.blocked_at) == ("waiting on ops", blocked.blocked_at)
    assert task.blocked_at is not None
    event = TaskEvent.objects.get(task_id=task.pk, kind=EventKind.BLOCKED)
    assert (event.reason, event.actor, event.detail["version"]) == ("waiting on ops", owner, before + 1)
    assert version(backlog.workflow) == before + 1


def test_blocking_a_blocked_task_updates_its_reason_but_not_its_start(board, make_task, owner):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    first = task_block(task=task, actor=owner, reason="waiting on ops")

    again = task_block(task=task, actor=owner, reason="waiting on security review")

    task = fresh(task)
    assert task.blocked_reason == "waiting on security review"
    assert task.blocked_at == first.blocked_at == again.blocked_at
    reasons = TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.BLOCKED).values_list("reason", flat=True)
    assert list(reasons) == ["waiting on ops", "waiting on security review"]


def test_unblocking_clears_the_block_and_records_the_reason_it_had(board, make_task, owner):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    task_block(task=task, actor=owner, reason="waiting on ops")

    task_unblock(task=task, actor=owner)

    task = fresh(task)
    assert (task.blocked_reason, task.blocked_at) == ("", None)
    assert TaskEvent.objects.get(task_id=task.pk, kind=EventKind.UNBLOCKED).reason == "waiting on ops"


def test_unblocking_a_task_that_is_not_blocked_changes_nothing(board, make_task, owner):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    before = board_state(backlog.workflow)

    task_unblock(task=task, actor=owner)

    assert board_state(backlog.workflow) == before


@pytest.mark.parametrize("reason", ["", "   ", None])
def test_blocking_without_a_reason_is_refused_and_leaves_nothing(board, make_task, owner, reason):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    before = board_state(backlog.workflow)

    with pytest.raises(Invalid) as refused:
        task_block(task=task, actor=owner, reason=reason)

    assert list(refused.value.extra["errors"]) == ["reason"]
    assert board_state(backlog.workflow) == before
    assert fresh(task).blocked_reason == ""


def test_an_archived_task_cannot_be_blocked(board, make_task, owner):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    admission.task_archive(task=task, actor=owner)
    before = board_state(backlog.workflow)

    with pytest.raises(Conflict):
        task_block(task=task, actor=owner, reason="waiting on ops")

    assert board_state(backlog.workflow) == before


# --- limits and the pull -----------------------------------------------------------------


def test_a_blocked_task_keeps_counting_toward_the_limit(board, make_task, owner):
    backlog, doing, _ = board
    first, _ = make_task(doing, "first"), make_task(doing, "second")
    task_block(task=first, actor=owner, reason="waiting on ops")
    waiting = make_task(backlog, "waiting")

    with pytest.raises(WipLimitReached):
        admission.task_move(task=waiting, to_step=doing, actor=owner)

    assert titles(doing) == ["first", "second"]


def test_the_pull_skips_a_blocked_candidate_and_takes_the_next(board, make_task, owner):
    backlog, doing, done = board
    first, _ = make_task(doing, "first"), make_task(doing, "second")
    stuck = make_task(backlog, "stuck")
    make_task(backlog, "next")
    make_task(backlog, "later")
    task_block(task=stuck, actor=owner, reason="needs a decision")

    admission.task_move(task=first, to_step=done, actor=owner)

    assert titles(doing) == ["second", "next"]
    assert titles(backlog) == ["stuck", "later"]
    assert not unsettled(backlog.workflow)


def test_a_blocked_task_arriving_in_the_feeder_is_not_pulled(board, make_task, owner):
    # Given an empty In Progress (room for two) and a blocked task in Done
    backlog, doing, done = board
    blocked = make_task(done, "blocked")
    task_block(task=blocked, actor=owner, reason="waiting on ops")

    # When it is moved back into Backlog, In Progress's feeder
    admission.task_move(task=blocked, to_step=backlog, actor=owner)

    # Then it waits there, and the board is settled all the same
    assert titles(doing) == []
    assert titles(backlog) == ["blocked"]
    assert not unsettled(backlog.workflow)


def test_unblocking_fills_the_consumer_in_the_same_version_and_message(board, make_task, owner, broadcasts):
    # Given In Progress with room for one and a blocked task waiting in Backlog
    backlog, doing, done = board
    make_task(doing, "working")
    stuck = make_task(done, "stuck")
    task_block(task=stuck, actor=owner, reason="waiting on ops")
    admission.task_move(task=stuck, to_step=backlog, actor=owner)
    assert titles(backlog) == ["stuck"]
    before = version(backlog.workflow)

    # When it is unblocked
    messages = broadcasts(backlog.workflow, lambda: task_unblock(task=stuck, actor=owner))

    # Then In Progress pulls it in the same change: one version step, one live message
    assert titles(doing) == ["working", "stuck"]
    assert version(backlog.workflow) == before + 1
    (message,) = messages
    assert (message["type"], message["version"]) == ("task.updated", before + 1)
    assert message["task"]["step_id"] == str(doing.pk)
    assert message["task"]["blocked_reason"] == ""
    steps = {s["id"]: s["occupied"] for s in message["steps"]}
    assert steps == {str(backlog.pk): 0, str(doing.pk): 2}
    kinds = TaskEvent.objects.filter(task_id=stuck.pk, detail__version=before + 1).values_list("kind", flat=True)
    assert sorted(kinds) == [EventKind.PULLED, EventKind.UNBLOCKED]
    assert not unsettled(backlog.workflow)


def test_blocking_is_announced_to_live_viewers(board, make_task, owner, broadcasts):
    _, _, done = board
    task = make_task(done, "deploy")

    messages = broadcasts(done.workflow, lambda: task_block(task=task, actor=owner, reason="waiting on ops"))

    (message,) = messages
    assert message["type"] == "task.updated"
    assert message["task"]["blocked_reason"] == "waiting on ops"
    assert message["task"]["blocked_at"] is not None
    assert [s["id"] for s in message["steps"]] == [str(done.pk)]


# --- the REST API ------------------------------------------------------------------------


def test_block_and_unblock_through_the_api(board, make_task, api):
    _, _, done = board
    task = make_task(done, "deploy")

    blocked = api.post(f"/api/v1/tasks/{task.pk}/block/", {"reason": "waiting on ops"}, format="json")
    assert blocked.status_code == 200, blocked.content
    assert blocked.json()["blocked_reason"] == "waiting on ops"
    assert blocked.json()["blocked_at"] is not None
    shown = api.get(f"/api/v1/tasks/{task.pk}/").json()
    assert (shown["blocked_reason"], shown["blocked_at"]) == ("waiting on ops", blocked.json()["blocked_at"])
    board_task = api.get(f"/api/v1/workflows/{done.workflow_id}/board/").json()["steps"][2]["tasks"][0]
    assert (board_task["blocked_reason"], board_task["blocked_at"]) == ("waiting on ops", shown["blocked_at"])

    reblocked = api.post(f"/api/v1/tasks/{task.pk}/block/", {"reason": "waiting on legal"}, format="json")
    assert reblocked.json()["blocked_reason"] == "waiting on legal"

    unblocked = api.post(f"/api/v1/tasks/{task.pk}/unblock/", {}, format="json")
    assert unblocked.status_code == 200
    assert (unblocked.json()["blocked_reason"], unblocked.json()["blocked_at"]) == ("", None)


@pytest.mark.parametrize("body", [{}, {"reason": ""}, {"reason": "   "}, {"reason": "x" * 2001}, {"reason": "a\x00b"}])
def test_the_api_refuses_a_block_without_a_good_reason_and_leaves_nothing(board, make_task, api, body):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    before = board_state(backlog.workflow)

    response = api.post(f"/api/v1/tasks/{task.pk}/block/", body, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["code"] == "invalid"
    assert list(response.json()["errors"]) == ["reason"]
    assert board_state(backlog.workflow) == before


def test_a_viewer_cannot_block_and_a_stranger_sees_nothing(board, make_task):
    backlog, _, _ = board
    task = make_task(backlog, "deploy")
    viewer = member_client(backlog.workflow.workspace, Role.VIEWER)
    stranger = member_client(WorkflowFactory().workspace, Role.OWNER)
    before = board_state(backlog.workflow)

    assert viewer.post(f"/api/v1/tasks/{task.pk}/block/", {"reason": "x"}, format="json").status_code == 403
    assert stranger.post(f"/api/v1/tasks/{task.pk}/block/", {"reason": "x"}, format="json").status_code == 404
    assert stranger.post(f"/api/v1/tasks/{task.pk}/unblock/", {}, format="json").status_code == 404

    assert board_state(backlog.workflow) == before


# --- a real-thread race ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@rounds(10)
def test_a_task_blocked_before_the_pull_commits_is_never_pulled():
    # Given In Progress (limit 1) full, pulling from Backlog where one task waits
    user = UserFactory()
    backlog, doing, done = factories.board(active={"In Progress": 1})
    workflow = backlog.workflow
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.OWNER)
    working = admission.task_create(workflow=workflow, step=doing, actor=user, title="working").task
    waiting = admission.task_create(workflow=workflow, step=backlog, actor=user, title="waiting").task

    # When a block of the waiting task races the move that vacates In Progress
    def act(i):
        if i == 0:
            return task_block(task=waiting, actor=user, reason="waiting on ops")
        return admission.task_move(task=working, to_step=done, actor=user)

    results = race(2, act)

    # Then whichever committed first decides: blocked first, it stays in Backlog
    assert not [r for r in results if isinstance(r, Exception)], results
    waiting = fresh(waiting)
    events = list(TaskEvent.objects.filter(task_id=waiting.pk).order_by("id").values_list("kind", flat=True))
    assert waiting.blocked_reason == "waiting on ops"
    blocked_first = EventKind.PULLED not in events or events.index(EventKind.BLOCKED) < events.index(EventKind.PULLED)
    assert waiting.step_id == (backlog.pk if blocked_first else doing.pk)
    assert not unsettled(workflow)
