"""6. Reorder: moves with a position in a 1,000-task column, over HTTP.

Three kinds of move, each `moves` times from one keep-alive client: a reorder inside the
column to a random index; a move into it from another 1,000-task column at a random index
(and back, at a random index); and, for comparison, a move without a position (to the
other column's end, and back). Server and PostgreSQL CPU per move come from /proc; the
queries and the task rows each kind writes are counted in-process on a few more moves.
"""

import asyncio
import random
import time

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.common import HttpConnection, percentile, spread
from bench.fixtures import bulk_tasks, workflow_with_steps
from boards.models import Task

KINDS = ("reorder", "across_at_index", "across_to_end")
WARM_UP_CONNECTIONS = 4  # the server's workers take connections in turn: reach each


def _columns(workflow) -> dict:
    """{task id: (step id, position)} of the board: what a move may have written."""
    return {pk: (step, position) for pk, step, position in workflow.tasks.values_list("id", "step_id", "position")}


class Moves:
    """The moves of each kind, as (task id, step id, position) bodies, drawn from one seed."""

    def __init__(self, workflow, left, right, seed: int):
        self.rng = random.Random(seed)
        self.left, self.right = left, right
        self.where = {pk: step for pk, (step, _) in _columns(workflow).items()}
        self.size = {left.pk: 0, right.pk: 0}
        for step in self.where.values():
            self.size[step] += 1

    def _to(self, task, step, position):
        self.size[self.where[task]] -= 1
        self.where[task] = step
        self.size[step] += 1
        return {"task": str(task), "step_id": str(step), "position": position}

    def _task_in(self, step):
        return self.rng.choice([pk for pk, s in self.where.items() if s == step])

    def next(self, kind: str, i: int) -> dict:
        left, right = self.left.pk, self.right.pk
        if kind == "reorder":
            return self._to(self._task_in(left), left, self.rng.randrange(self.size[left]))
        source, target = (left, right) if i % 2 == 0 else (right, left)  # back and forth: sizes stay
        position = self.rng.randrange(self.size[target] + 1) if kind == "across_at_index" else None
        return self._to(self._task_in(source), target, position)


def _body(move: dict) -> dict:
    body = {"step_id": move["step_id"]}
    if move["position"] is not None:
        body["position"] = move["position"]
    return body


async def _timed(port: int, key: str, moves: list[dict]) -> list[float]:
    conn = HttpConnection(port, {"Authorization": f"Token {key}"})
    await conn.open()
    try:
        times = []
        for move in moves:
            start = time.perf_counter()
            status, body = await conn.request("POST", f"/api/v1/tasks/{move['task']}/move/", _body(move))
            times.append((time.perf_counter() - start) * 1000)
            assert status == 200, f"move answered {status}: {body[:200]!r}"
        return times
    finally:
        await conn.close()


def _counted(workflow, key: str, moves: list[dict]) -> tuple[list[int], list[int]]:
    client, queries, rows = Client(), [], []
    for move in moves:
        before = _columns(workflow)
        with CaptureQueriesContext(connection) as captured:
            response = client.post(
                f"/api/v1/tasks/{move['task']}/move/",
                _body(move),
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Token {key}",
            )
        assert response.status_code == 200, response.content[:200]
        after = _columns(workflow)
        queries.append(len(captured))
        rows.append(sum(1 for pk, place in after.items() if before[pk] != place))
    return queries, rows


def run(*, workspace, key: str, server, meter, column: int, moves: int, counted: int) -> dict:
    workflow, (left, right) = workflow_with_steps(
        workspace, "Reorder", [{"name": "Backlog", "is_start_step": True}, {"name": "Next"}]
    )
    bulk_tasks(left, column, label="Backlog")
    bulk_tasks(right, column, label="Next")
    plan = Moves(workflow, left, right, seed=17)
    for _ in range(WARM_UP_CONNECTIONS):  # untimed: each worker runs every kind before the clock starts
        asyncio.run(_timed(server.port, key, [plan.next(kind, i) for kind in KINDS for i in range(2)]))
    results = {}
    for kind in KINDS:
        timed = [plan.next(kind, i) for i in range(moves)]
        before = meter.sample()
        times = asyncio.run(_timed(server.port, key, timed))
        cpu = meter.per_op(before, len(times))
        queries, rows = _counted(workflow, key, [plan.next(kind, i) for i in range(counted)])
        results[kind] = {
            "moves": len(times),
            "p50_ms": percentile(times, 50),
            "p99_ms": percentile(times, 99),
            "server_cpu_ms": cpu["server"],
            "postgres_cpu_ms": cpu["postgres"],
            "queries": spread(queries),
            "rows_written": spread(rows),
        }
    assert Task.objects.filter(workflow=workflow).count() == 2 * column
    return {"column": column, "counted_moves": counted, "kinds": results}
