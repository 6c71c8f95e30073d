"""WebSocket handshake authentication: a token on the
`Authorization` header or `?token=` needs no Origin; a session cookie needs an allowed origin
(scheme, host and port exact); no API key is ever printed in the server's log."""

import json

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from websockets.sync.client import connect

from accounts.models import ApiToken
from kandev.asgi import application
from tests.servers import Server, serving_test_database

pytestmark = pytest.mark.django_db(transaction=True)
HOST = (b"host", b"127.0.0.1:8000")
DENIED = "1000"  # refused before the handshake completes: HTTP 403 on a real server


def outcome(workflow, headers, query: str = "") -> str:
    viewer = WebsocketCommunicator(application, f"/ws/workflows/{workflow.pk}/{query}", headers=headers)

    async def first() -> str:
        connected, code = await viewer.connect()
        if not connected:
            return str(code)
        message = await viewer.receive_json_from(timeout=5)
        await viewer.disconnect()
        return message["type"]

    return async_to_sync(first)()


def session_cookie(user) -> tuple:
    client = Client()
    client.force_login(user)
    return (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())


def test_a_token_needs_no_origin_on_the_header_or_the_query(owner, workflow, board):
    _, key = ApiToken.issue(user=owner)
    header = (b"authorization", f"Token {key}".encode())
    assert outcome(workflow, [HOST, header]) == "board.snapshot"
    assert outcome(workflow, [HOST], f"?token={key}") == "board.snapshot"
    # A bad key on the header is not rescued by the session cookie beside it.
    bad = (b"authorization", b"Token " + b"0" * 40)
    assert outcome(workflow, [HOST, bad, (b"origin", b"http://127.0.0.1:8000"), session_cookie(owner)]) == "4403"


@pytest.mark.parametrize(
    "origin",
    [
        b"http://127.0.0.1:3000",  # another port
        b"https://127.0.0.1:8000",  # another scheme
        b"https://localhost:4444",
        b"http://127.0.0.1:8000.evil.example",
        b"null",
    ],
)
def test_a_session_handshake_from_another_origin_is_refused(owner, workflow, board, origin):
    assert outcome(workflow, [HOST, (b"origin", origin), session_cookie(owner)]) == DENIED


def test_a_session_handshake_needs_its_own_or_a_trusted_origin(owner, workflow, board, settings):
    cookie = session_cookie(owner)
    assert outcome(workflow, [HOST, cookie]) == DENIED  # no Origin at all
    assert outcome(workflow, [HOST, (b"origin", b"http://127.0.0.1:8000"), cookie]) == "board.snapshot"
    settings.CSRF_TRUSTED_ORIGINS = ["https://board.example.com"]
    assert outcome(workflow, [HOST, (b"origin", b"https://board.example.com"), cookie]) == "board.snapshot"


def test_a_header_token_client_connects_without_origin_and_no_key_reaches_the_log(
    django_db_setup, owner, workflow, board
):
    _, key = ApiToken.issue(user=owner)
    server = Server(serving_test_database(), log_level="info", access_log=True).start()
    try:
        ws_url = server.url.replace("http://", "ws://") + f"/ws/workflows/{workflow.pk}/"
        # Python's websockets sends no Origin header.
        with connect(ws_url, additional_headers={"Authorization": f"Token {key}"}, open_timeout=10) as viewer:
            assert json.loads(viewer.recv(timeout=10))["type"] == "board.snapshot"
        with connect(f"{ws_url}?token={key}", open_timeout=10) as legacy:
            assert json.loads(legacy.recv(timeout=10))["type"] == "board.snapshot"
        assert httpx.get(f"{server.url}/healthz?token={key}").status_code == 200
    finally:
        server.stop()
        log = server.log()
    assert f"/ws/workflows/{workflow.pk}/?token=[redacted]" in log  # the line is there, redacted
    assert "/healthz?token=[redacted]" in log
    assert key not in log
