"""Redis down: broadcast after commit is best effort, so no board change ever fails."""

import socket

import httpx

from tests.stress.servers import ServerPool, fresh_database, seed


def test_moves_succeed_and_persist_while_the_channel_layer_is_unreachable():
    closed = socket.socket()  # bound, never listening: connections to it are refused
    closed.bind(("127.0.0.1", 0))
    redis_url = f"redis://127.0.0.1:{closed.getsockname()[1]}/0"
    try:
        with fresh_database("redis_down") as url:
            people = seed(url)
            with ServerPool(url, workers=1, REDIS_URL=redis_url) as pool:
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
