"""Dependencies ("blocks / blocked by"): links between tasks of one workspace, never a cycle;
a task blocked by an unfinished task is never pulled, and when its blocker reaches a done
step its board settles in the same change (another board of the workspace right after)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import admission
from boards.changes import reconcile_board
from boards.dependencies import blockers_of
from boards.links import link_create
from boards.models import EventKind, Task, TaskEvent, TaskLink
from boards.snapshots import build_snapshot
from boards.structure import step_update
from tests import factories
from tests.conftest import board_state, member_client
from tests.factories import MembershipFactory, WorkflowFactory
from workflows.models import Role, StepKind


def fresh(task) -> Task:
    return Task.objects.get(pk=task.pk)


def link(api, task, **body):
    return api.post(f"/api/v1/tasks/{task.pk}/links/", body, format="json")


def in_step(step) -> list[str]:
    return list(Task.objects.live().filter(step=step).in_board_order().values_list("title", flat=True))


@pytest.fixture
def full_board(workflow, make_task):
    """Backlog -> In Progress (limit 2, pulls from Backlog, full) -> Done."""
    backlog, doing, done = factories.board(workflow)
    make_task(doing, "busy 1")
    make_task(doing, "busy 2")
    return backlog, doing, done


# --- the API -------------------------------------------------------------------------------


def test_a_link_from_either_end_blocks_the_dependent_until_its_blocker_is_done(full_board, make_task, api):
    backlog, doing, done = full_board
    blocker = make_task(backlog, "build the API")
    dependent = make_task(backlog, "write the client")

    answer = link(api, dependent, blocked_by_task_id=str(blocker.pk))

    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert (body["blocker_id"], body["dependent_id"]) == (str(blocker.pk), str(dependent.pk))
    assert body["blocker"]["title"] == "build the API" and body["blocker"]["finished"] is False
    assert fresh(dependent).blocked_by == [str(blocker.pk)]
    detail = api.get(f"/api/v1/tasks/{dependent.pk}/").json()
    assert detail["blocked_by"] == [str(blocker.pk)]
    assert detail["waiting"]["skipped_because"] == "dependency"
    assert detail["waiting"]["blocked_by"] == [
        {"id": str(blocker.pk), "title": "build the API", "workflow_id": str(blocker.workflow_id)}
    ]
    listed = api.get(f"/api/v1/tasks/{blocker.pk}/links/").json()
    assert [(r["blocker_id"], r["dependent_id"]) for r in listed["results"]] == [(str(blocker.pk), str(dependent.pk))]
    assert api.get("/api/v1/tasks/?blocked=true").json()["count"] == 1
    event = TaskEvent.objects.get(task_id=dependent.pk, kind=EventKind.LINKED)
    assert event.detail["blocker_id"] == str(blocker.pk)

    other = make_task(backlog, "unrelated")
    assert link(api, blocker, blocks_task_id=str(other.pk)).status_code == 201
    assert fresh(other).blocked_by == [str(blocker.pk)]


def test_a_blocked_task_is_passed_over_and_pulled_when_its_blocker_is_done(full_board, make_task, owner):
    backlog, doing, done = full_board
    blocker = Task.objects.get(title="busy 1")
    first = make_task(backlog, "first in line")
    make_task(backlog, "second in line")
    link_create(blocker=blocker, dependent=first, actor=owner, field="blocked_by_task_id")

    admission.task_move(task=Task.objects.get(title="busy 2"), to_step=done, actor=owner)
    assert in_step(doing) == ["busy 1", "second in line"]  # the blocked first was passed over

    admission.task_move(task=blocker, to_step=done, actor=owner)  # finishes it: "first" is free and pulled

    assert in_step(doing) == ["second in line", "first in line"]
    assert fresh(first).blocked_by == []
    pulled = TaskEvent.objects.get(task_id=first.pk, kind=EventKind.PULLED)
    finished = TaskEvent.objects.filter(task_id=blocker.pk, kind=EventKind.MOVED).last()
    assert pulled.detail["version"] == finished.detail["version"]  # one change


def test_a_blocker_leaving_done_blocks_again_and_archiving_it_frees(board, make_task, owner):
    backlog, doing, done = board
    blocker = make_task(done, "shipped")
    dependent = make_task(backlog, "follow-up")
    link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id")
    assert fresh(dependent).blocked_by == []  # a finished blocker blocks nothing

    admission.task_move(task=blocker, to_step=doing, actor=owner)
    assert fresh(dependent).blocked_by == [str(blocker.pk)]

    admission.task_archive(task=blocker, actor=owner)
    assert fresh(dependent).blocked_by == []
    admission.task_restore(task=blocker, actor=owner)
    assert fresh(dependent).blocked_by == [str(blocker.pk)]

    admission.task_delete(task=fresh(blocker), actor=owner)
    assert fresh(dependent).blocked_by == []
    assert not TaskLink.objects.exists()


def test_a_step_becoming_done_finishes_its_tasks_for_their_dependents(board, make_task, owner):
    backlog, doing, _ = board
    blocker = make_task(doing, "review")
    dependent = make_task(backlog, "release")
    link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id")

    step_update(step=doing, actor=owner, kind=StepKind.DONE)
    assert fresh(dependent).blocked_by == []
    step_update(step=doing, actor=owner, kind=StepKind.ACTIVE)
    assert fresh(dependent).blocked_by == [str(blocker.pk)]


def test_a_blocker_done_on_another_board_settles_the_dependents_board_after_commit(
    workflow, full_board, make_task, owner, django_capture_on_commit_callbacks
):
    backlog, doing, done = full_board
    other = WorkflowFactory(workspace=workflow.workspace, name="Platform")
    _, other_doing, other_done = factories.board(other)
    blocker = make_task(other_doing, "platform upgrade")
    dependent = make_task(backlog, "feature on it")
    link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id")
    admission.task_move(task=Task.objects.get(title="busy 1"), to_step=done, actor=owner)
    assert in_step(doing) == ["busy 2"]  # room, but its only candidate waits for another board

    with django_capture_on_commit_callbacks(execute=True):
        admission.task_move(task=blocker, to_step=other_done, actor=owner)

    assert in_step(doing) == ["busy 2", "feature on it"]
    assert fresh(dependent).blocked_by == []


def test_the_reconciler_mends_blockers_a_crash_left_behind(board, make_task, owner):
    backlog, doing, done = board
    blocker = make_task(done, "done long ago")
    dependent = make_task(backlog, "waits")
    TaskLink.objects.create(blocker=blocker, dependent=dependent)
    Task.objects.filter(pk=dependent.pk).update(blocked_by=[str(blocker.pk)])  # as a lost follow-up leaves it

    assert reconcile_board(workflow_id=backlog.workflow_id)

    assert fresh(dependent).blocked_by == [] == blockers_of([dependent.pk])[dependent.pk]
    assert in_step(doing) == ["waits"]


# --- refusals ------------------------------------------------------------------------------


def test_a_cycle_a_self_link_and_a_duplicate_are_400_and_persist_nothing(board, make_task, api, owner):
    backlog, _, _ = board
    a, b, c = (make_task(backlog, name) for name in "abc")
    link_create(blocker=a, dependent=b, actor=owner, field="blocks_task_id")
    link_create(blocker=b, dependent=c, actor=owner, field="blocks_task_id")
    before = board_state(backlog.workflow)

    cycle = link(api, c, blocks_task_id=str(a.pk))
    self_link = link(api, a, blocks_task_id=str(a.pk))
    duplicate = link(api, a, blocks_task_id=str(b.pk))
    both = link(api, a, blocks_task_id=str(c.pk), blocked_by_task_id=str(c.pk))

    assert cycle.status_code == 400 and "cycle" in cycle.json()["errors"]["blocks_task_id"][0]
    assert self_link.status_code == 400 and self_link.json()["errors"]["blocks_task_id"]
    assert duplicate.status_code == 400 and duplicate.json()["errors"]["blocks_task_id"]
    assert both.status_code == 400 and set(both.json()["errors"]) == {"blocks_task_id", "blocked_by_task_id"}
    assert board_state(backlog.workflow) == before
    assert TaskLink.objects.count() == 2


def test_another_workspaces_task_is_400_and_an_unseen_one_leaks_nothing(board, make_task, api, owner):
    backlog, _, _ = board
    mine = make_task(backlog, "mine")
    elsewhere = WorkflowFactory(name="Elsewhere")
    MembershipFactory(workspace=elsewhere.workspace, user=owner, role=Role.OWNER)
    (their_backlog, *_) = factories.board(elsewhere)
    theirs = make_task(their_backlog, "in my other workspace")
    stranger_board = WorkflowFactory(name="Stranger's")
    (stranger_backlog, *_) = factories.board(stranger_board)
    unseen = make_task(stranger_backlog, "secret", actor=None)

    other_workspace = link(api, mine, blocks_task_id=str(theirs.pk))
    not_visible = link(api, mine, blocks_task_id=str(unseen.pk))
    missing = link(api, mine, blocks_task_id="00000000-0000-0000-0000-000000000000")

    assert other_workspace.status_code == 400
    assert other_workspace.json()["errors"] == {"blocks_task_id": ["Not a task of this workspace."]}
    assert not_visible.status_code == missing.status_code == 400
    assert not_visible.json() == missing.json()  # the same answer whether or not it exists
    assert api.get(f"/api/v1/tasks/{unseen.pk}/links/").status_code == 404
    assert link(api, unseen, blocks_task_id=str(mine.pk)).status_code == 404
    stranger_link = TaskLink.objects.create(blocker=unseen, dependent=make_task(stranger_backlog, "x", actor=None))
    assert api.delete(f"/api/v1/links/{stranger_link.pk}/").status_code == 404
    assert TaskLink.objects.count() == 1


def test_viewers_see_links_but_cannot_make_or_remove_them(board, make_task, owner):
    backlog, _, _ = board
    a, b = make_task(backlog, "a"), make_task(backlog, "b")
    made = link_create(blocker=a, dependent=b, actor=owner, field="blocks_task_id")
    viewer = member_client(backlog.workflow.workspace, Role.VIEWER)

    assert viewer.get(f"/api/v1/tasks/{a.pk}/links/").json()["count"] == 1
    assert link(viewer, b, blocks_task_id=str(a.pk)).status_code == 403
    assert viewer.delete(f"/api/v1/links/{made.pk}/").status_code == 403
    assert TaskLink.objects.count() == 1
    anonymous = member_client(backlog.workflow.workspace, Role.MEMBER)
    anonymous.force_authenticate(None)
    assert anonymous.get(f"/api/v1/tasks/{a.pk}/links/").status_code == 401


def test_removing_the_last_blocker_pulls_the_dependent_in_the_same_change(full_board, make_task, api, owner):
    backlog, doing, done = full_board
    blocker = make_task(backlog, "blocker")
    dependent = make_task(backlog, "dependent")
    made = link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id")
    Task.objects.filter(pk=blocker.pk).update(blocked_reason="parked")  # the blocker itself is never pulled
    admission.task_move(task=Task.objects.get(title="busy 1"), to_step=done, actor=owner)
    assert in_step(doing) == ["busy 2"]

    assert api.delete(f"/api/v1/links/{made.pk}/").status_code == 204

    assert in_step(doing) == ["busy 2", "dependent"]
    assert TaskEvent.objects.filter(task_id=dependent.pk, kind=EventKind.UNLINKED).count() == 1
    assert api.delete(f"/api/v1/links/{made.pk}/").status_code == 404


def test_links_cross_boards_of_one_workspace(workflow, board, make_task, api):
    backlog, _, _ = board
    other = WorkflowFactory(workspace=workflow.workspace)
    (other_backlog, *_) = factories.board(other)
    here, there = make_task(backlog, "here"), make_task(other_backlog, "there")

    assert link(api, here, blocked_by_task_id=str(there.pk)).status_code == 201
    assert fresh(here).blocked_by == [str(there.pk)]


def test_a_member_may_link(board, make_task):
    backlog, _, _ = board
    a, b = make_task(backlog, "a"), make_task(backlog, "b")
    member = member_client(backlog.workflow.workspace, Role.MEMBER)
    assert link(member, a, blocks_task_id=str(b.pk)).status_code == 201


# --- export and import ---------------------------------------------------------------------


def test_an_export_carries_the_links_and_its_import_restores_them_before_any_pull(
    full_board, make_task, api, owner, workflow
):
    backlog, doing, done = full_board
    blocker = Task.objects.get(title="busy 1")
    dependent = make_task(backlog, "waits for busy 1")
    finished = make_task(done, "shipped")
    follow_up = make_task(backlog, "after shipped")
    link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id")
    link_create(blocker=finished, dependent=follow_up, actor=owner, field="blocks_task_id")
    admission.task_move(task=Task.objects.get(title="busy 2"), to_step=done, actor=owner)  # room for one
    assert in_step(doing) == ["busy 1", "after shipped"]

    document = api.get(f"/api/v1/workflows/{workflow.pk}/export/?format=json").json()
    rows = document["workflows"][0]["tasks"]
    place = {row["title"]: f"workflows[0].tasks[{j}]" for j, row in enumerate(rows)}
    assert {row["title"]: row.get("blocked_by") for row in rows if "blocked_by" in row} == {
        "waits for busy 1": [place["busy 1"]],
        "after shipped": [place["shipped"]],
    }
    document["workflows"][0]["name"] = "Restored"
    answer = api.post(f"/api/v1/workspaces/{workflow.workspace_id}/workflows/import/", document, format="json")

    assert answer.status_code == 201, answer.content
    copy = Task.objects.filter(workflow__name="Restored")
    by_title = {t.title: t for t in copy}
    assert by_title["waits for busy 1"].blocked_by == [str(by_title["busy 1"].pk)]
    assert by_title["waits for busy 1"].step.name == "Backlog"  # not pulled past its blocker
    assert by_title["after shipped"].blocked_by == []
    assert TaskLink.objects.filter(dependent__workflow__name="Restored").count() == 2


def test_an_import_with_a_cycle_or_a_bad_place_writes_nothing(full_board, api, workflow):
    document = api.get(f"/api/v1/workflows/{workflow.pk}/export/?format=json").json()
    rows = document["workflows"][0]["tasks"]
    rows[0]["blocked_by"] = ["workflows[0].tasks[1]"]
    rows[1]["blocked_by"] = ["workflows[0].tasks[0]"]
    document["workflows"][0]["name"] = "Cyclic"
    url = f"/api/v1/workspaces/{workflow.workspace_id}/workflows/import/"

    cycle = api.post(url, document, format="json")
    rows[1]["blocked_by"] = ["workflows[3].tasks[0]"]
    bad = api.post(url, document, format="json")

    assert cycle.status_code == 400 and "cycle" in json_text(cycle)
    assert bad.status_code == 400 and "workflows[0].tasks[1].blocked_by" in bad.json()["errors"]
    assert not Task.objects.filter(workflow__name="Cyclic").exists()


def json_text(response) -> str:
    return response.content.decode()


# --- what viewers see ----------------------------------------------------------------------


def test_the_live_message_carries_the_dependent_when_linked_and_when_its_blocker_is_done(
    full_board, make_task, owner, broadcasts
):
    backlog, doing, done = full_board
    blocker = Task.objects.get(title="busy 1")
    dependent = make_task(backlog, "waits")

    (linked,) = broadcasts(
        backlog.workflow,
        lambda: link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id"),
    )
    (finished,) = broadcasts(backlog.workflow, lambda: admission.task_move(task=blocker, to_step=done, actor=owner))

    assert linked["type"] == "task.updated" and linked["task"]["id"] == str(dependent.pk)
    assert linked["task"]["blocked_by"] == [str(blocker.pk)]
    pictures = {task["id"]: task for task in finished["tasks"]}
    assert pictures[str(dependent.pk)]["blocked_by"] == []
    assert pictures[str(dependent.pk)]["step_id"] == str(doing.pk)  # pulled in the same change


def test_the_board_read_carries_blocked_by_in_as_many_queries_whatever_the_tasks(board, make_task, owner):
    backlog, doing, _ = board
    blocker = make_task(doing, "blocker")

    def read_with(dependents: int) -> tuple[int, dict]:
        for n in range(dependents):
            task = make_task(backlog, f"dependent {n}")
            link_create(blocker=blocker, dependent=task, actor=owner, field="blocks_task_id")
        workflow = type(backlog.workflow).objects.get(pk=backlog.workflow_id)
        with CaptureQueriesContext(connection) as queries:
            snapshot = build_snapshot(workflow=workflow)
        return len(queries), snapshot

    few, _ = read_with(1)
    many, snapshot = read_with(6)
    assert few == many
    cards = [card for step in snapshot["steps"] for card in step["tasks"] if card["title"].startswith("dependent")]
    assert len(cards) == 7 and all(card["blocked_by"] == [str(blocker.pk)] for card in cards)
