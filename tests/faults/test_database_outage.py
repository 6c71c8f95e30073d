"""A database outage, between real kandev workers and PostgreSQL: requests fail fast with 503
and the API's error body, nothing of a refused request persists, and service comes back
without restarting kandev. The outage is a TCP proxy that is cut (never the shared server)."""

import time
from urllib.parse import urlsplit

import httpx
import pytest

from tests.faults.proxy import TcpProxy
from tests.servers import ServerPool, database_url, fresh_database, production_env, via_port
from tests.stress.seed import seed

pytestmark = pytest.mark.slow
UNAVAILABLE = {"code": "unavailable", "detail": "The database is unavailable; retry shortly."}
# Far above the 2 s connect timeout the workers get: a hang would show as a client timeout.
CLIENT_TIMEOUT = 30


@pytest.fixture(scope="module", params=["0", "4"], ids=["connection per request", "pool"])
def stack(request):
    pg = urlsplit(database_url())
    with fresh_database("outage") as url:
        people = seed(url)
        with TcpProxy((pg.hostname, pg.port or 5432)) as proxy:
            # The pool's wait bounds how fast a request fails while the database is away.
            pool_size = {"DATABASE_POOL_MAX_SIZE": request.param, "DATABASE_POOL_TIMEOUT": "5"}
            with ServerPool(production_env(via_port(url, proxy.port), **pool_size), workers=1) as pool:
                yield pool, proxy, people


def once_back(request, attempts=30):
    """The first answer that is not a 503: a pool reconnects in the background, with backoff."""
    for _ in range(attempts):
        response = request()
        if response.status_code != 503:
            return response
        time.sleep(1)
    return response


def client(pool, token):
    return httpx.Client(base_url=pool.base_url, headers={"Authorization": f"Token {token}"}, timeout=CLIENT_TIMEOUT)


def make_board(api, workspace_id):
    body = {"workspace_id": workspace_id, "name": "Outage"}
    workflow = api.post("/api/v1/workflows/", json=body).json()
    todo = api.post("/api/v1/steps/", json={"workflow_id": workflow["id"], "name": "Todo"}).json()
    done = api.post("/api/v1/steps/", json={"workflow_id": workflow["id"], "name": "Done"}).json()
    return workflow, todo, done


@pytest.mark.parametrize("hang", [False, True], ids=["refused", "unanswered"])
def test_requests_fail_fast_with_503_and_recover_without_restart(stack, hang):
    pool, proxy, people = stack
    with client(pool, people["tokens"]["owner"]) as api:
        workflow, todo, done = make_board(api, people["workspace_id"])
        task = api.post("/api/v1/tasks/", json={"step_id": todo["id"], "title": "before"}).json()
        board_before = api.get(f"/api/v1/workflows/{workflow['id']}/board/").json()

        proxy.cut(hang=hang)
        try:
            refused = [
                api.get(f"/api/v1/workflows/{workflow['id']}/board/"),
                api.post("/api/v1/tasks/", json={"step_id": todo["id"], "title": "during"}),
                api.post(f"/api/v1/tasks/{task['id']}/move/", json={"step_id": done["id"]}),
                api.patch(f"/api/v1/steps/{todo['id']}/", json={"wip_limit": 1}),
            ]
            ready = httpx.get(f"{pool.base_url}/readyz", timeout=CLIENT_TIMEOUT)
            alive = httpx.get(f"{pool.base_url}/healthz", timeout=CLIENT_TIMEOUT)
        finally:
            proxy.restore()

        for response in refused:
            assert response.status_code == 503, response.text
            assert response.json() == UNAVAILABLE
            assert response.headers["Retry-After"] == "5"
        assert ready.status_code == 503
        assert alive.status_code == 200

        # Back without a restart, and nothing of the refused writes was kept.
        after = once_back(lambda: api.get(f"/api/v1/workflows/{workflow['id']}/board/"))
        assert after.status_code == 200
        assert after.json() == board_before
        moved = api.post(f"/api/v1/tasks/{task['id']}/move/", json={"step_id": done["id"]})
        assert moved.status_code == 200
        assert moved.json()["step_id"] == done["id"]


def test_session_views_outside_drf_answer_503_too(stack):
    """The admin (a plain Django view reading the session) during an outage."""
    pool, proxy, _ = stack
    proxy.cut()
    try:
        response = httpx.get(f"{pool.base_url}/admin/", cookies={"sessionid": "x" * 32}, timeout=CLIENT_TIMEOUT)
    finally:
        proxy.restore()
    assert response.status_code == 503
    assert response.json() == UNAVAILABLE
    back = once_back(lambda: httpx.get(f"{pool.base_url}/admin/", timeout=CLIENT_TIMEOUT))
    assert back.status_code == 302  # to the login page: the session store answers again
