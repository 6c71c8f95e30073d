"""Assignees and personal WIP limits: a person's limit counts their live
admitted tasks in active steps of every board of the workspace; assigning, and an assigned
task entering an active step, are admissions; a pull skips a candidate whose assignee is
full; capacity freed for a person fills their other boards right after commit."""

import pytest

from boards import admission
from boards.models import NOT_ASSIGNABLE, EventKind, Task, TaskEvent
from boards.services import task_update
from common.errors import Invalid, WipLimitReached
from tests import factories
from tests.conftest import board_state
from tests.factories import MembershipFactory, StepFactory, UserFactory
from workflows.models import OnFull, Role


@pytest.fixture
def alice(workflow):
    """A member who may hold three tasks in progress."""
    user = UserFactory(username="alice")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER, wip_limit=3)
    return user


@pytest.fixture
def other_board(workflow):
    """A second board of the same workspace: Backlog -> In Progress (limit 5) -> Done."""
    return factories.board(workspace=workflow.workspace, name="Support", active={"In Progress": 5})


def step_of(task):
    return Task.objects.get(pk=task.pk).step


def test_the_refusal_names_the_person_their_limit_and_their_work(board, make_task, alice, api):
    _, doing, done = board
    doing.wip_limit = 10
    doing.save()
    for title in "abc":
        make_task(doing, title, assignee_id=alice.pk)
    before = board_state(doing.workflow)

    refused = api.post(
        "/api/v1/tasks/", {"step_id": str(doing.pk), "title": "d", "assignee_id": alice.pk}, format="json"
    )

    assert refused.status_code == 409
    assert refused.json() == {
        "code": "wip_limit_reached",
        "scope": "person",
        "assignee": {"id": alice.pk, "username": "alice"},
        "limit": 3,
        "occupied": 3,
        "detail": "alice is at their WIP limit (3 of 3).",
    }
    assert board_state(doing.workflow) == before


def test_a_persons_work_is_counted_across_the_boards_of_the_workspace(board, other_board, make_task, alice):
    _, doing, _ = board
    _, support, _ = other_board
    make_task(doing, "a", assignee_id=alice.pk)
    make_task(support, "b", assignee_id=alice.pk)
    make_task(support, "c", assignee_id=alice.pk)

    with pytest.raises(WipLimitReached) as refused:
        make_task(doing, "d", assignee_id=alice.pk)

    assert (refused.value.scope, refused.value.occupied) == ("person", 3)


def test_only_active_steps_count(board, make_task, alice, owner):
    backlog, doing, done = board
    doing.wip_limit, doing.pull_from_step = 10, None  # what waits in Backlog stays there
    doing.save()
    waiting = [make_task(backlog, f"later {i}", assignee_id=alice.pk) for i in range(3)]
    finished = make_task(doing, "finished", assignee_id=alice.pk)
    admission.task_move(task=finished, to_step=done, actor=owner)
    for title in "ab":
        make_task(doing, title, assignee_id=alice.pk)

    admission.task_move(task=waiting[0], to_step=doing, actor=owner)  # her third: admitted

    with pytest.raises(WipLimitReached):
        admission.task_move(task=waiting[1], to_step=doing, actor=owner)
    assert [step_of(t) for t in waiting] == [doing, backlog, backlog]


def test_a_move_between_active_steps_is_not_judged_by_the_person(board, make_task, alice, owner):
    _, doing, _ = board
    review = StepFactory(workflow=doing.workflow, name="Review", position=3)
    doing.wip_limit = 10
    doing.save()
    tasks = [make_task(doing, t, assignee_id=alice.pk) for t in "abc"]

    admission.task_move(task=tasks[0], to_step=review, actor=owner)

    assert step_of(tasks[0]) == review


def test_assigning_is_an_admission_and_unassigning_lets_the_pull_take_the_task(board, make_task, alice, owner):
    backlog, doing, _ = board
    doing.wip_limit = 10
    doing.save()
    for title in "abc":
        make_task(doing, title, assignee_id=alice.pk)
    fourth = make_task(doing, "fourth")
    waiting = make_task(backlog, "waiting", assignee_id=alice.pk)  # skipped by the pull: she is full
    assert step_of(waiting) == backlog

    with pytest.raises(WipLimitReached):
        task_update(task=fourth, actor=owner, assignee_id=alice.pk)
    assert Task.objects.get(pk=fourth.pk).assignee_id is None

    task_update(task=waiting, actor=owner, assignee_id=None)

    assert step_of(waiting) == doing
    assigned = TaskEvent.objects.get(task_id=waiting.pk, kind=EventKind.ASSIGNED).detail
    assert (assigned["action"], assigned["assignee_id"], assigned["previous"]) == ("assign", None, alice.pk)


def test_a_pull_skips_a_candidate_whose_assignee_is_full_and_takes_the_next(board, make_task, alice, owner):
    backlog, doing, _ = board
    doing.wip_limit = 4
    doing.save()
    for title in "abc":
        make_task(doing, title, assignee_id=alice.pk)
    leaving = make_task(doing, "someone's")  # In Progress is full
    alices = make_task(backlog, "alice's next", assignee_id=alice.pk)
    anyones = make_task(backlog, "anyone's next")

    admission.task_archive(task=leaving, actor=owner)  # a slot opens, none of alice's

    assert (step_of(alices), step_of(anyones)) == (backlog, doing)
    pulled = TaskEvent.objects.filter(kind=EventKind.PULLED).values_list("task_id", flat=True)
    assert list(pulled) == [anyones.pk]


def test_work_leaving_a_person_on_one_board_fills_their_other_board_after_commit(
    board, other_board, make_task, alice, owner, django_capture_on_commit_callbacks
):
    _, doing, done = board
    support_backlog, support, _ = other_board
    doing.wip_limit = 10
    doing.save()
    tasks = [make_task(doing, t, assignee_id=alice.pk) for t in "abc"]
    waiting = make_task(support_backlog, "waiting on the other board", assignee_id=alice.pk)
    assert step_of(waiting) == support_backlog  # she is full: Support's pull skipped it

    with django_capture_on_commit_callbacks() as after_commit:
        admission.task_move(task=tasks[0], to_step=done, actor=owner)
    assert step_of(waiting) == support_backlog  # not in the same transaction: another board

    for callback in after_commit:
        callback()

    assert step_of(waiting) == support
    event = TaskEvent.objects.get(task_id=waiting.pk, kind=EventKind.PULLED)
    assert (event.from_step_id, event.to_step_id) == (support_backlog.pk, support.pk)


class TestWhoMayBeAssigned:
    @pytest.mark.parametrize("role", [Role.VIEWER, None])
    def test_only_members_and_owners_of_the_workspace(self, board, make_task, api, role):
        backlog, _, _ = board
        outsider = UserFactory(username="sam")
        if role is not None:
            MembershipFactory(workspace=backlog.workflow.workspace, user=outsider, role=role)
        task = make_task(backlog, "a")
        before = board_state(backlog.workflow)

        created = api.post(
            "/api/v1/tasks/", {"step_id": str(backlog.pk), "title": "b", "assignee_id": outsider.pk}, format="json"
        )
        patched = api.patch(f"/api/v1/tasks/{task.pk}/", {"assignee_id": outsider.pk}, format="json")

        for response in (created, patched):
            assert response.status_code == 400
            assert response.json()["errors"] == {"assignee_id": [NOT_ASSIGNABLE]}
        assert board_state(backlog.workflow) == before

    def test_the_service_decides_it_under_the_lock_with_the_same_message(self, board, owner):
        backlog, _, _ = board
        viewer = UserFactory(username="vic")
        MembershipFactory(workspace=backlog.workflow.workspace, user=viewer, role=Role.VIEWER)

        with pytest.raises(Invalid) as refused:
            admission.task_create(
                workflow=backlog.workflow, step=backlog, actor=owner, title="a", assignee_id=viewer.pk
            )

        assert refused.value.extra["errors"] == {"assignee_id": [NOT_ASSIGNABLE]}
        assert not Task.objects.exists()

    def test_a_member_of_another_workspace_is_no_assignee(self, board, api):
        backlog, _, _ = board
        elsewhere = MembershipFactory(user=UserFactory(username="ext"), role=Role.OWNER).user

        response = api.post(
            "/api/v1/tasks/", {"step_id": str(backlog.pk), "title": "b", "assignee_id": elsewhere.pk}, format="json"
        )

        assert response.json()["errors"] == {"assignee_id": [NOT_ASSIGNABLE]}


class TestApi:
    def test_the_assignee_is_written_on_create_and_patch_and_read_everywhere(self, board, alice, api):
        _, _, done = board
        created = api.post(
            "/api/v1/tasks/", {"step_id": str(done.pk), "title": "a", "assignee_id": alice.pk}, format="json"
        )
        assert created.status_code == 201
        task_id = created.json()["id"]
        assert created.json()["assignee_id"] == alice.pk

        unassigned = api.patch(f"/api/v1/tasks/{task_id}/", {"assignee_id": None}, format="json")

        assert unassigned.json()["assignee_id"] is None
        reassigned = api.patch(f"/api/v1/tasks/{task_id}/", {"assignee_id": alice.pk}, format="json")
        assert reassigned.json()["assignee_id"] == alice.pk
        assert api.get(f"/api/v1/tasks/{task_id}/").json()["assignee_id"] == alice.pk
        assert api.get("/api/v1/tasks/").json()["results"][0]["assignee_id"] == alice.pk
        card = api.get(f"/api/v1/workflows/{done.workflow_id}/board/").json()["steps"][2]["tasks"][0]
        assert (card["assignee_id"], card["class_of_service"]) == (alice.pk, "standard")

    @pytest.mark.parametrize("value", ["alice", -1, 0, 2**31, 1.5])
    def test_an_assignee_id_must_be_a_user_id(self, board, api, value):
        backlog, _, _ = board
        response = api.post(
            "/api/v1/tasks/", {"step_id": str(backlog.pk), "title": "a", "assignee_id": value}, format="json"
        )
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {"assignee_id"}

    def test_a_change_of_assignee_reaches_live_viewers(self, board, make_task, alice, owner, broadcasts):
        backlog, _, _ = board
        task = make_task(backlog, "a")

        (message,) = broadcasts(backlog.workflow, lambda: task_update(task=task, actor=owner, assignee_id=alice.pk))

        assert message["type"] == "task.updated"
        assert (message["task"]["assignee_id"], message["tasks"][0]["assignee_id"]) == (alice.pk, alice.pk)


class TestQueueMode:
    """A queue-mode step queues a task whose assignee is full, even without a limit of its own."""

    @pytest.fixture
    def steps(self, workflow):
        queue = StepFactory(workflow=workflow, name="Doing", position=0, on_full=OnFull.QUEUE)
        elsewhere = StepFactory(workflow=workflow, name="Elsewhere", position=1)
        done = StepFactory(workflow=workflow, name="Done", position=2, kind="done")
        return queue, elsewhere, done

    @pytest.fixture
    def bea(self, workflow):
        user = UserFactory(username="bea")
        MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER, wip_limit=1)
        return user

    def test_room_in_the_step_does_not_promote_past_the_assignees_limit(self, steps, make_task, bea, owner):
        queue, _, done = steps
        make_task(queue, "hers", assignee_id=bea.pk)
        queued = make_task(queue, "her next", assignee_id=bea.pk)
        leaving = make_task(queue, "someone's")
        assert not queued.admitted

        admission.task_move(task=leaving, to_step=done, actor=owner)  # the step fills: nothing for bea

        assert not Task.objects.get(pk=queued.pk).admitted

    def test_freeing_the_assignee_in_another_step_promotes_their_queued_task(self, steps, make_task, bea, owner):
        queue, elsewhere, done = steps
        hers = make_task(elsewhere, "hers", assignee_id=bea.pk)
        queued = make_task(queue, "her next", assignee_id=bea.pk)

        admission.task_move(task=hers, to_step=done, actor=owner)

        assert Task.objects.get(pk=queued.pk).admitted
        assert TaskEvent.objects.filter(task_id=queued.pk, kind=EventKind.PROMOTED).count() == 1
