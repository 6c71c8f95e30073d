"""Many viewers opening one board at once on the Redis channel layer all get their snapshot:
redis-py 8 caps a connection pool at 100 connections by default and refuses past that
(MaxConnectionsError), which turned a burst of handshakes into HTTP 500s."""

import asyncio
import json
import os

import pytest
from websockets.asyncio.client import connect

from accounts.models import ApiToken
from tests.servers import Server, serving_test_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
VIEWERS = 300


def test_a_burst_of_viewers_on_one_worker_all_get_the_board(django_db_setup, owner, workflow, board):
    _, key = ApiToken.issue(user=owner)
    with Server(serving_test_database(REDIS_URL=REDIS_URL)) as server:
        url = server.url.replace("http://", "ws://") + f"/ws/workflows/{workflow.pk}/"

        async def view():
            async with connect(url, additional_headers={"Authorization": f"Token {key}"}, open_timeout=60) as ws:
                return json.loads(await asyncio.wait_for(ws.recv(), 60))["type"]

        async def burst():
            return await asyncio.gather(*(view() for _ in range(VIEWERS)), return_exceptions=True)

        outcomes = asyncio.run(burst())
        log = server.log()
    assert outcomes == ["board.snapshot"] * VIEWERS, [o for o in outcomes if o != "board.snapshot"][:3]
    assert "MaxConnectionsError" not in log
