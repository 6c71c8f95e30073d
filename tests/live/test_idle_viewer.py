"""An idle board viewer on the Redis channel layer stays connected (issue 12 item 6: redis-py 8's
5 s default socket timeout dropped every viewer whose channel had no traffic for 5 s)."""

import json
import os

import httpx
import pytest
from websockets.sync.client import connect

from accounts.models import ApiToken
from tests.servers import Server, serving_test_database

pytestmark = pytest.mark.django_db(transaction=True)
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
IDLE_SECONDS = 60


def test_an_idle_viewer_stays_connected_and_gets_the_next_change(django_db_setup, owner, workflow, board):
    backlog, _, _ = board
    _, key = ApiToken.issue(user=owner)
    server = Server(serving_test_database(REDIS_URL=REDIS_URL)).start()
    try:
        ws_url = server.url.replace("http://", "ws://")
        with connect(f"{ws_url}/ws/workflows/{workflow.pk}/?token={key}", origin=server.url, open_timeout=10) as viewer:
            assert json.loads(viewer.recv(timeout=10))["type"] == "board.snapshot"
            # The idle period is the point: nothing may arrive, not even a close.
            with pytest.raises(TimeoutError):
                viewer.recv(timeout=IDLE_SECONDS)
            created = httpx.post(
                f"{server.url}/api/v1/tasks/",
                json={"step_id": str(backlog.pk), "title": "Wake up"},
                headers={"Authorization": f"Token {key}"},
            )
            assert created.status_code == 201
            message = json.loads(viewer.recv(timeout=10))
            assert (message["type"], message["task"]["title"]) == ("task.created", "Wake up")
    finally:
        server.stop()
        log = server.log()
    assert "TimeoutError" not in log
