"""Redis down: broadcast after commit is best effort, so no board change ever fails."""

import json
import socket
import subprocess
import time
from contextlib import ExitStack

import httpx
import psycopg
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from tests.servers import ServerPool, fresh_database, production_env
from tests.stress.seed import seed

pytestmark = pytest.mark.slow


def test_moves_succeed_and_persist_while_the_channel_layer_is_unreachable():
    closed = socket.socket()  # bound, never listening: connections to it are refused
    closed.bind(("127.0.0.1", 0))
    redis_url = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"
    try:
        with fresh_database("redis_down") as url:
            people = seed(url)
            with ServerPool(production_env(url, REDIS_URL=redis_url), workers=1) as pool:
                headers = {"Authorization": f"Token {people['tokens']['owner']}"}
                with httpx.Client(base_url=pool.base_url, headers=headers, timeout=30) as api:
                    body = {"workspace_id": people["workspace_id"], "name": "No Redis"}
                    workflow = api.post("/api/v1/workflows/", json=body).json()
                    steps = [
                        api.post("/api/v1/steps/", json={"workflow_id": workflow["id"], "name": n})
                        for n in ("Todo", "Done")
                    ]
                    assert [s.status_code for s in steps] == [201, 201]
                    todo, done = (s.json()["id"] for s in steps)
                    created = api.post("/api/v1/tasks/", json={"step_id": todo, "title": "t"})
                    assert created.status_code == 201
                    task = created.json()["id"]
                    moved = api.post(f"/api/v1/tasks/{task}/move/", json={"step_id": done})
                    assert moved.status_code == 200
                    board = api.get(f"/api/v1/workflows/{workflow['id']}/board/").json()
                logs = pool.logs_text()
        assert [[t["id"] for t in s["tasks"]] for s in board["steps"]] == [[], [task]]
        assert board["workflow"]["version"] == 4  # two steps, a create, a move: all committed
        assert "on_commit" in logs  # each failed broadcast was logged, after its commit
    finally:
        closed.close()


class PrivateRedis:
    """A redis-server of this test's own on a free loopback port (never the shared one),
    which can be stopped and started again on the same port."""

    def __init__(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the private redis-server did not answer PING")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def open_viewer(viewers: ExitStack, pool, workflow_id, key):
    """A viewer's WebSocket (closed with `viewers`) and its first message, the snapshot."""
    ws_url = pool.base_url.replace("http://", "ws://")
    viewer = viewers.enter_context(
        connect(
            f"{ws_url}/ws/workflows/{workflow_id}/?token={key}",
            additional_headers={"Origin": pool.base_url},
            open_timeout=10,
            close_timeout=2,
        )
    )
    snapshot = json.loads(viewer.recv(timeout=10))
    assert snapshot["type"] == "board.snapshot"
    return viewer, snapshot


def reopen_viewer(viewers: ExitStack, pool, workflow_id, key, timeout: float = 30):
    """What board.js does after a drop: reconnect until a snapshot arrives."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return open_viewer(viewers, pool, workflow_id, key)
        except (OSError, InvalidStatus, ConnectionClosed, TimeoutError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def db_version(url: str, workflow_id: str) -> int:
    with psycopg.connect(url) as db:
        row = db.execute("SELECT version FROM workflows_workflow WHERE id = %s", [workflow_id])
        return row.fetchone()[0]


def test_moves_succeed_through_a_redis_restart_and_viewers_resynchronise_after_it():
    redis = PrivateRedis()
    try:
        redis.start()
        with (
            fresh_database("redis_restart") as url,
            ExitStack() as viewers,
        ):
            people = seed(url)
            key = people["tokens"]["owner"]
            with (
                ServerPool(production_env(url, REDIS_URL=redis.url), workers=1) as pool,
                httpx.Client(base_url=pool.base_url, headers={"Authorization": f"Token {key}"}, timeout=30) as api,
            ):
                body = {"workspace_id": people["workspace_id"], "name": "Redis restarts"}
                workflow_id = api.post("/api/v1/workflows/", json=body).json()["id"]
                todo, done = (
                    api.post("/api/v1/steps/", json={"workflow_id": workflow_id, "name": n}).json()["id"]
                    for n in ("Todo", "Done")
                )
                tasks = [
                    api.post("/api/v1/tasks/", json={"step_id": todo, "title": f"t{i}"}).json()["id"] for i in range(3)
                ]
                viewer, before = open_viewer(viewers, pool, workflow_id, key)

                redis.stop()
                for task in tasks[:2]:
                    moved = api.post(f"/api/v1/tasks/{task}/move/", json={"step_id": done})
                    assert moved.status_code == 200
                during = api.get(f"/api/v1/workflows/{workflow_id}/board/").json()
                assert [[t["id"] for t in s["tasks"]] for s in during["steps"]] == [tasks[2:], tasks[:2]]
                assert during["workflow"]["version"] == before["version"] + 2
                redis.start()

                # The viewer's consumer loses its Redis receive and the socket drops: that is
                # board.js's cue to reconnect. A socket that stayed open would be silently
                # stale (it missed both moves, and its group membership died with Redis).
                with pytest.raises(ConnectionClosed):
                    viewer.recv(timeout=10)
                viewer, resynced = reopen_viewer(viewers, pool, workflow_id, key)
                board = api.get(f"/api/v1/workflows/{workflow_id}/board/").json()
                assert resynced["board"] == board
                assert resynced["version"] == db_version(url, workflow_id) == before["version"] + 2

                moved = api.post(f"/api/v1/tasks/{tasks[2]}/move/", json={"step_id": done})
                assert moved.status_code == 200
                live = json.loads(viewer.recv(timeout=10))
                assert (live["type"], live["version"]) == ("task.moved", resynced["version"] + 1)
                assert live["tasks"] == [{**live["tasks"][0], "id": tasks[2], "step_id": done}]
    finally:
        redis.stop()
