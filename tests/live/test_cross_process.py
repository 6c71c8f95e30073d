"""Scale-out: two uvicorn processes sharing the Redis channel layer and cache. A change
committed through one process reaches a WebSocket viewer connected to the other, and the
other's next board read takes it from the change kept in the cache, not from a rebuild."""

import json
import os

import httpx
import orjson
import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from accounts.models import ApiToken
from boards.snapshots import build_snapshot
from tests.servers import Server, serving_test_database
from workflows.models import Workflow

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
METRICS_TOKEN = "cross-process-metrics"


@pytest.fixture(scope="module")
def two_servers(django_db_setup):
    env = serving_test_database(DEBUG="1", REDIS_URL=REDIS_URL, KANDEV_METRICS_TOKEN=METRICS_TOKEN)
    with Server(env) as first, Server(env) as second:
        yield first, second


def watch(server, workflow, key):
    ws_url = server.url.replace("http://", "ws://")
    return connect(
        f"{ws_url}/ws/workflows/{workflow.pk}/?token={key}",
        additional_headers={"Origin": server.url},
        open_timeout=10,
    )


def test_event_committed_by_one_process_reaches_a_viewer_of_the_other(two_servers, owner, workflow, board, make_task):
    backlog, doing, done = board
    busy = make_task(doing, "Busy")
    make_task(doing, "Also busy")
    waiting = make_task(backlog, "Next up")  # after In Progress is full: it waits there
    _, key = ApiToken.issue(user=owner)
    first, second = two_servers
    auth = {"Authorization": f"Token {key}"}

    with (
        watch(second, workflow, key) as viewer_of_second,
        watch(first, workflow, key) as viewer_of_first,
    ):
        for viewer in (viewer_of_second, viewer_of_first):
            snapshot = json.loads(viewer.recv(timeout=10))
            assert (snapshot["type"], snapshot["version"]) == ("board.snapshot", 3)

        moved = httpx.post(
            f"{first.url}/api/v1/tasks/{busy.pk}/move/",
            json={"step_id": str(done.pk)},
            headers=auth,
        )
        assert moved.status_code == 200
        message = json.loads(viewer_of_second.recv(timeout=10))
        assert (message["type"], message["version"]) == ("task.moved", 4)
        assert {t["id"]: t["step_id"] for t in message["tasks"]} == {
            str(busy.pk): str(done.pk),
            str(waiting.pk): str(doing.pk),  # the pull, in the same message
        }
        assert json.loads(viewer_of_first.recv(timeout=10))["version"] == 4

        created = httpx.post(
            f"{second.url}/api/v1/tasks/",
            json={"step_id": str(backlog.pk), "title": "New"},
            headers=auth,
        )
        assert created.status_code == 201
        message = json.loads(viewer_of_first.recv(timeout=10))
        assert (message["type"], message["version"]) == ("task.created", 5)
        assert message["task"]["title"] == "New"


def test_revoking_a_token_through_one_process_closes_its_socket_on_the_other(two_servers, owner, workflow, board):
    """Revocation across workers: the revocation travels on the Redis channel layer."""
    backlog, _, _ = board
    token, key = ApiToken.issue(user=owner)
    _, other_key = ApiToken.issue(user=owner)
    first, second = two_servers

    with watch(first, workflow, key) as viewer, watch(first, workflow, other_key) as other_viewer:
        for socket in (viewer, other_viewer):
            assert json.loads(socket.recv(timeout=10))["type"] == "board.snapshot"
        revoked = httpx.delete(
            f"{second.url}/api/v1/tokens/{token.pk}/", headers={"Authorization": f"Token {other_key}"}
        )
        assert revoked.status_code == 204
        with pytest.raises(ConnectionClosed) as closed:
            viewer.recv(timeout=5)
        assert closed.value.rcvd.code == 4403
        created = httpx.post(
            f"{second.url}/api/v1/tasks/",
            json={"step_id": str(backlog.pk), "title": "After"},
            headers={"Authorization": f"Token {other_key}"},
        )
        assert created.status_code == 201
        assert json.loads(other_viewer.recv(timeout=10))["task"]["title"] == "After"


def snapshots_served(server, how: str) -> float:
    """The server's count of board reads it served `how` (cached, applied, built)."""
    metrics = httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).text
    line = f'kandev_board_snapshots_total{{how="{how}"}} '
    return next((float(row.removeprefix(line)) for row in metrics.splitlines() if row.startswith(line)), 0.0)


def test_a_board_read_after_a_change_committed_by_the_other_process_applies_it(
    two_servers, owner, workflow, board, make_task
):
    # Given the second process holding the board (In Progress full, a task waiting behind it)
    backlog, doing, done = board
    busy = [make_task(doing, f"Busy {i}") for i in range(2)]
    make_task(backlog, "Next up")
    _, key = ApiToken.issue(user=owner)
    first, second = two_servers
    auth = {"Authorization": f"Token {key}"}
    board_path = f"/api/v1/workflows/{workflow.pk}/board/"
    assert httpx.get(f"{second.url}{board_path}", headers=auth).status_code == 200
    applied = snapshots_served(second, "applied")

    # When the first process moves a task to Done (In Progress pulls the waiting one)
    moved = httpx.post(f"{first.url}/api/v1/tasks/{busy[0].pk}/move/", json={"step_id": str(done.pk)}, headers=auth)
    assert moved.status_code == 200

    # Then the second's next read applies that change's kept message, and is the board as
    # the database has it
    read = httpx.get(f"{second.url}{board_path}", headers=auth).json()
    assert snapshots_served(second, "applied") == applied + 1
    fresh = build_snapshot(workflow=Workflow.objects.get(pk=workflow.pk))
    assert read == orjson.loads(orjson.dumps(fresh))
    assert [[t["title"] for t in s["tasks"]] for s in read["steps"]] == [[], ["Busy 1", "Next up"], ["Busy 0"]]
