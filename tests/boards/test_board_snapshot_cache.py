"""The board is built once per version: a second read of an unchanged board costs only the
membership read, and any change (which bumps the version) shows at the next read; a read
just after a change applies the change's kept message, at the same cost."""

import threading

import orjson
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import admission, snapshots, structure
from boards.models import Task
from boards.snapshots import board_json, build_snapshot
from tests.concurrency import committed_after
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
    assert len(built) == 7 and len(reread) == 1  # the workflow with the member's role only

    admission.task_move(task=first, to_step=done, actor=owner)
    after = api.get(url).json()
    assert after["workflow"]["version"] == before["workflow"]["version"] + 1
    assert [[t["title"] for t in s["tasks"]] for s in after["steps"]] == [[], [], ["first"]]
    assert after["steps"][2]["occupied"] == 1

    paged = api.get(url, {"per_step": 1}).json()  # another shape, built on its own
    assert paged["steps"][2]["tasks_total"] == 1


def test_readers_of_one_version_share_its_json_and_a_change_encodes_anew(api, owner, board, make_task):
    backlog, doing, done = board
    task = make_task(backlog, "first")
    workflow = Workflow.objects.get(pk=backlog.workflow_id)
    version, encoded = board_json(workflow=workflow)

    # Readers of the same version get the very bytes, which are the REST board's body
    assert board_json(workflow=Workflow.objects.get(pk=workflow.pk))[1] is encoded
    assert api.get(f"/api/v1/workflows/{workflow.pk}/board/").content == encoded
    assert orjson.loads(encoded) == orjson.loads(orjson.dumps(build_snapshot(workflow=workflow)))

    # After a change, the new version's JSON shows it
    admission.task_move(task=task, to_step=done, actor=owner)
    after_version, after = board_json(workflow=Workflow.objects.get(pk=workflow.pk))
    assert after_version == version + 1 and after is not encoded
    assert [t["title"] for t in orjson.loads(after)["steps"][2]["tasks"]] == ["first"]


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


# Collected on PostgreSQL only: on SQLite a writer waits for the build's IMMEDIATE transaction,
# so nothing can commit between its queries.
if connection.vendor == "postgresql":

    @pytest.mark.django_db(transaction=True)
    def test_a_build_shows_one_board_though_a_change_commits_between_its_queries(owner, board, make_task):
        # Given a task in Done, and a build of the board that has just read its steps
        done = board[2]
        task = make_task(done, "moving")
        workflow = Workflow.objects.get(pk=done.workflow_id)

        def new_step_and_move():
            step = structure.step_create(workflow=workflow, actor=owner, name="New", position=3)
            admission.task_move(task=task, to_step=step, actor=owner)

        # When a new step is made and the task moves into it, both committed
        with committed_after('FROM "workflows_workflowstep"', new_step_and_move) as committed:
            snapshot = build_snapshot(workflow=workflow)

        # Then the build shows the board as it was when it began: the task in Done, no new step
        assert committed
        assert [s["name"] for s in snapshot["steps"]] == ["Backlog", "In Progress", "Done"]
        assert [[t["title"] for t in s["tasks"]] for s in snapshot["steps"]] == [[], [], ["moving"]]
        assert snapshot["steps"][2]["occupied"] == 1
        assert Task.objects.get(pk=task.pk).step.name == "New"


@pytest.mark.django_db(transaction=True)
def test_readers_arriving_together_at_a_new_version_wait_for_one_build(owner, board, make_task, monkeypatch):
    # Given a board, and four readers that all ask for its version at once
    make_task(board[0], "t")
    workflow_id = board[0].workflow_id
    readers = 4
    asked, builds = threading.Semaphore(0), []
    kept, build = snapshots._kept, snapshots.build_snapshot

    def asking(key, version):
        found = kept(key, version)
        asked.release()
        return found

    def building(**kwargs):
        builds.append(kwargs)
        # Build only once every reader has asked and found nothing kept: each would build its own now.
        for _ in range(readers):
            assert asked.acquire(timeout=30)
        return build(**kwargs)

    monkeypatch.setattr(snapshots, "_kept", asking)
    monkeypatch.setattr(snapshots, "build_snapshot", building)
    read = []

    def reader():
        try:
            read.append(board_json(workflow=Workflow.objects.get(pk=workflow_id)))
        finally:
            connection.close()

    threads = [threading.Thread(target=reader) for _ in range(readers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    # Then one of them built it, and all four got its very bytes
    assert len(builds) == 1
    assert len(read) == readers and len({id(encoded) for _, encoded in read}) == 1
