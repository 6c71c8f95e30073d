"""The board is built once per version: a second read of an unchanged board costs only the
membership read, and any change (which bumps the version) shows at the next read."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import admission


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
