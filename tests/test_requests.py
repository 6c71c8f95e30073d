"""kandev's HTTP handler (kandev/requests.py): Django's sync path in one hop, on two lanes.

Driven in-process through the ASGI interface, with the real middleware, views and
PostgreSQL (or SQLite) database; the lanes' threads are the handler's own.
"""

import asyncio
import json
import threading

import pytest
from django.db import connections

from accounts.models import ApiToken
from boards.models import Task
from flow import figures
from kandev.requests import RequestHandler
from kandev.urls import ANALYTICS_PATH
from tests.factories import MembershipFactory, StepFactory, WorkflowFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


def call(handler, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    """One HTTP request through `handler`: (status, headers, body)."""
    return asyncio.run(request(handler, method, path, body, headers))


async def request(handler, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    """`call` on the running event loop, beside other requests."""
    data = json.dumps(body).encode() if body is not None else b""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"testserver"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode()),
        ]
        + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }
    sent = []

    async def receive():
        return {"type": "http.request", "body": data, "more_body": False}

    async def send(message):
        sent.append(message)

    await handler(scope, receive, send)
    start = sent[0]
    return start["status"], dict(start["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


@pytest.fixture
def handler():
    made = RequestHandler(read_threads=1, write_threads=1)
    yield made
    for lane in made.lanes.values():  # each lane thread's connection, then the thread
        lane.submit(connections.close_all).result()
        lane.shutdown()


@pytest.fixture
def member_step():
    workflow = WorkflowFactory()
    membership = MembershipFactory(workspace=workflow.workspace, role=Role.MEMBER)
    _, key = ApiToken.issue(user=membership.user)
    return StepFactory(workflow=workflow, name="Todo", is_start_step=True), {"Authorization": f"Token {key}"}


def test_a_read_is_answered_by_the_view_through_the_middleware(handler):
    status, headers, body = call(handler, "GET", "/healthz")
    assert status == 200
    assert json.loads(body) == {"status": "ok"}
    assert headers[b"X-Frame-Options"] == b"DENY"  # the middleware ran


def test_a_write_is_served_while_every_read_thread_is_busy(handler, member_step):
    step, auth = member_step
    release, busy = threading.Event(), threading.Event()

    def hold_the_read_lane():
        busy.set()
        release.wait(timeout=30)

    held = handler.lanes["read"].submit(hold_the_read_lane)
    busy.wait(timeout=30)
    try:
        status, _, body = call(handler, "POST", "/api/v1/tasks/", {"step_id": str(step.pk), "title": "Ship"}, auth)
        assert status == 201, body
        assert Task.objects.get(pk=json.loads(body)["id"]).step_id == step.pk
        assert not held.done()  # the read lane was held throughout
    finally:
        release.set()
        held.result()


def test_an_error_has_the_api_body(handler, member_step):
    _, auth = member_step
    status, _, body = call(handler, "POST", "/api/v1/tasks/", {"title": ""}, auth)
    assert status == 400
    assert json.loads(body)["code"] == "invalid"


def test_a_request_hands_its_database_connection_back(handler, member_step):
    step, auth = member_step
    call(handler, "POST", "/api/v1/tasks/", {"step_id": str(step.pk), "title": "Ship"}, auth)

    def lane_connection_open():
        return connections["default"].connection is not None

    assert handler.lanes["write"].submit(lane_connection_open).result() is False


def test_a_board_read_is_served_while_analytics_are_busy(member_step, monkeypatch):
    """Four CFDs held mid-computation take the analytics lane's one thread, never the read
    lane's: a board read is answered meanwhile, and one figure is computed at a time."""
    step, auth = member_step
    lanes = RequestHandler(read_threads=2, write_threads=1, analytics_threads=1, analytics_path=ANALYTICS_PATH)
    release, computing = threading.Event(), threading.Event()
    running, most = [0], [0]
    real_cfd = figures.cfd

    def held_cfd(*args, **kwargs):
        running[0] += 1
        most[0] = max(most[0], running[0])
        computing.set()
        release.wait(timeout=60)
        running[0] -= 1
        return real_cfd(*args, **kwargs)

    monkeypatch.setattr(figures, "cfd", held_cfd)
    board = f"/api/v1/workflows/{step.workflow_id}/board/"
    cfd = f"/api/v1/workflows/{step.workflow_id}/flow/cfd/"

    async def scenario():
        analytics = [asyncio.create_task(request(lanes, "GET", cfd, headers=auth)) for _ in range(4)]
        try:
            assert await asyncio.to_thread(computing.wait, 30)
            status, _, body = await asyncio.wait_for(request(lanes, "GET", board, headers=auth), timeout=30)
            assert status == 200, body
            assert json.loads(body)["steps"][0]["id"] == str(step.pk)
            assert not any(task.done() for task in analytics)  # all held or waiting throughout
        finally:
            release.set()
        return [status for status, _, _ in await asyncio.gather(*analytics)]

    try:
        assert asyncio.run(scenario()) == [200] * 4
        assert most[0] == 1
    finally:
        release.set()
        for lane in lanes.lanes.values():
            lane.submit(connections.close_all).result()
            lane.shutdown()
