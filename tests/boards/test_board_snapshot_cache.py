"""The board is built once per version: a second read of an unchanged board costs only the
membership read, and any change (which bumps the version) shows at the next read; a read
just after a change applies the change's kept message, at the same cost."""

import orjson
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import admission
from boards.snapshots import build_snapshot
from workflows.models import Workflow


def test_an_unchanged_board_is_built_once_and_every_change_shows_at_once(api, owner, board, make_task):
    backlog, doing, done = board
    first = make_task(backlog, "first")
    url = f"/api/v1/workflows/{backlog.workflow_id}/board/"
    with CaptureQueriesContext(connection) as built:
        before = api.get(url).json()
    with CaptureQueriesContext(connection) as reread:
        again = api.get(url).json()
    assert again == before
    assert len(built) == 5 and len(reread) == 1  # the workflow with the member's role only

    admission.task_move(task=first, to_step=done, actor=owner)
    after = api.get(url).json()
    assert after["workflow"]["version"] == before["workflow"]["version"] + 1
    assert [[t["title"] for t in s["tasks"]] for s in after["steps"]] == [[], [], ["first"]]
    assert after["steps"][2]["occupied"] == 1

    paged = api.get(url, {"per_step": 1}).json()  # another shape, built on its own
    assert paged["steps"][2]["tasks_total"] == 1


def test_the_settings_page_leaves_the_shared_snapshot_as_it_was(client, owner, board, make_task):
    backlog = board[0]
    make_task(backlog, "t")
    client.force_login(owner)
    assert client.get(f"/workflows/{backlog.workflow_id}/settings/").status_code == 200
    board_json = client.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").json()
    assert all("event_lists" not in step for step in board_json["steps"])


def test_a_read_just_after_a_change_costs_only_the_membership_read(
    api, owner, board, make_task, django_capture_on_commit_callbacks
):
    # Given a board this process has read, In Progress full and a task waiting in Backlog
    backlog, doing, done = board
    busy = [make_task(doing, f"busy {i}") for i in range(2)]
    make_task(backlog, "next")
    url = f"/api/v1/workflows/{backlog.workflow_id}/board/"
    api.get(url)

    # When a task moves to Done and In Progress pulls the waiting one, committed
    with django_capture_on_commit_callbacks(execute=True):
        admission.task_move(task=busy[0], to_step=done, actor=owner)

    # Then the next read applies the change: one query (the workflow with the member's
    # role), and the board it shows is the one the database has
    with CaptureQueriesContext(connection) as read:
        after = api.get(url).json()
    assert len(read) == 1
    assert after == orjson.loads(orjson.dumps(build_snapshot(workflow=Workflow.objects.get(pk=backlog.workflow_id))))
    assert [[t["title"] for t in s["tasks"]] for s in after["steps"]] == [[], ["busy 1", "next"], ["busy 0"]]
