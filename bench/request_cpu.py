"""6. Server CPU per request, against the no-op request's (issue 17, goals 1 and 2).

Interleaved in each repetition, with the same keep-alive clients: `GET /healthz` (the
floor), `POST /api/v1/tasks/` (each client creates on a board of its own), a move across
steps and a reorder inside a 1,000-task column (`POST /api/v1/tasks/<id>/move/` with the
same step and a random `position`; each client on a board of its own), and a read of a
1,000-task board just after a change (one client: a move made in-process by the suite,
whose own PostgreSQL backend is not counted, then the read over HTTP). CPU comes from /proc:
the server's processes, the suite database's PostgreSQL backends and Redis.
"""

import asyncio
import random
import time
from concurrent.futures import ThreadPoolExecutor

from django.db import connection, connections

from bench.common import HttpConnection, cpu_spread, healthz_ceiling, percentile, spread, timed_http_clients
from bench.fixtures import bulk_tasks, workflow_with_steps
from boards.admission import task_move
from boards.models import Task

COLUMN = 1000
KINDS = ("create", "move", "reorder")


def two_columns(workspace, name: str, tasks: int):
    """Two unlimited steps, the first holding `tasks`: moves are never refused nor pull."""
    workflow, steps = workflow_with_steps(
        workspace, name, [{"name": "Column", "is_start_step": True}, {"name": "Other"}]
    )
    if tasks:
        bulk_tasks(steps[0], tasks, label=name)
    return workflow, steps


def task_ids(workflow) -> list[str]:
    return [str(pk) for pk in Task.objects.filter(workflow=workflow).values_list("id", flat=True)]


def writes(port, key, clients: int, duration: float, kind: str, boards: list, seed: int):
    """`kind` requests by `clients` clients, each on its own board."""

    def make(conn, i):
        rng = random.Random(seed * 1000 + i)
        workflow, steps, ids, where = boards[i]
        column, other = (str(s.pk) for s in steps)

        async def op():
            if kind == "create":
                status, _ = await conn.request("POST", "/api/v1/tasks/", {"step_id": column, "title": f"cpu {i}"})
                return "ok" if status == 201 else f"error {status}"
            task = rng.choice(ids)
            if kind == "move":
                target = other if where.get(task, column) == column else column
                status, _ = await conn.request("POST", f"/api/v1/tasks/{task}/move/", {"step_id": target})
                where[task] = target
            else:
                position = rng.randrange(COLUMN)
                body = {"step_id": column, "position": position}
                status, _ = await conn.request("POST", f"/api/v1/tasks/{task}/move/", body)
            return "ok" if status == 200 else f"error {status}"

        return op

    return asyncio.run(timed_http_clients(port, {"Authorization": f"Token {key}"}, clients, duration, make))


async def _reads_after_changes(port, key, workflow, steps, user, reads: int, seed: int, db) -> list[float]:
    """Each read follows a change made in-process on `db`'s thread (a move across the two columns)."""
    rng = random.Random(seed)
    loop = asyncio.get_running_loop()
    tasks = await loop.run_in_executor(db, lambda: list(Task.objects.filter(workflow=workflow)))

    def change():
        i = rng.randrange(len(tasks))
        target = steps[1] if tasks[i].step_id == steps[0].pk else steps[0]
        tasks[i].workflow = workflow
        tasks[i] = task_move(task=tasks[i], to_step=target, actor=user).task

    conn = HttpConnection(port, {"Authorization": f"Token {key}"})
    path = f"/api/v1/workflows/{workflow.pk}/board/"
    await conn.open()
    times = []
    try:
        await conn.request("GET", path)
        for _ in range(reads):
            await loop.run_in_executor(db, change)
            start = time.perf_counter()
            status, body = await conn.request("GET", path)
            times.append((time.perf_counter() - start) * 1000)
            if status != 200:
                raise RuntimeError(f"board read answered {status}: {body[:200]!r}")
    finally:
        await conn.close()
    return times


def _backend_pid() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        return cursor.fetchone()[0]


def run(*, workspace, user, key: str, port: int, meter_for, clients: int, duration: float, reps: int, reads: int):
    """`meter_for(exclude)` makes the run's CpuMeter leaving out the given backend pids."""
    meter = meter_for(())
    boards = {
        kind: [two_columns(workspace, f"CPU {kind}", 0 if kind == "create" else COLUMN) for _ in range(clients)]
        for kind in KINDS
    }
    boards = {kind: [(w, s, task_ids(w), {}) for w, s in made] for kind, made in boards.items()}
    board, board_steps = two_columns(workspace, "CPU read", COLUMN)
    db = ThreadPoolExecutor(1)  # the in-process changes' one connection, whose backend is left out
    read_meter = meter_for((db.submit(_backend_pid).result(),))

    figures = {kind: [] for kind in ("healthz", *KINDS, "read_after_change")}
    for rep in range(reps):
        ceiling = healthz_ceiling(port, meter, clients, duration)
        figures["healthz"].append({"rate": ceiling["rate"], "cpu_ms": ceiling["cpu_ms"], "errors": 0})
        for kind in KINDS:
            before = meter.sample()
            lat, elapsed, outcomes = writes(port, key, clients, duration, kind, boards[kind], rep)
            figures[kind].append(
                {
                    "rate": len(lat) / elapsed,
                    "p50_ms": percentile([v * 1000 for v in lat], 50),
                    "p99_ms": percentile([v * 1000 for v in lat], 99),
                    "cpu_ms": meter.per_op(before, len(lat)),
                    "errors": sum(n for label, n in outcomes.items() if label != "ok"),
                }
            )
        before = read_meter.sample()
        times = asyncio.run(_reads_after_changes(port, key, board, board_steps, user, reads, rep, db))
        figures["read_after_change"].append(
            {"p50_ms": percentile(times, 50), "cpu_ms": read_meter.per_op(before, len(times)), "errors": 0}
        )

    db.submit(connections.close_all).result()
    db.shutdown()

    def ratio(kind: str) -> dict:
        pairs = list(zip(figures[kind], figures["healthz"], strict=True))
        return {
            scale: spread([r["cpu_ms"][scale] / h["cpu_ms"][scale] for r, h in pairs]) for scale in ("total", "server")
        }

    return {
        "clients": clients,
        "duration_s": duration,
        "repetitions": reps,
        "column": COLUMN,
        "reads": reads,
        "figures": {
            kind: {
                "cpu_ms": cpu_spread([r["cpu_ms"] for r in runs]),
                "rate": spread([r.get("rate") for r in runs]),
                "p50_ms": spread([r.get("p50_ms") for r in runs]),
                "p99_ms": spread([r.get("p99_ms") for r in runs]),
                "errors": sum(r["errors"] for r in runs),
            }
            for kind, runs in figures.items()
        },
        "ratios_to_healthz": {kind: ratio(kind) for kind in (*KINDS, "read_after_change")},
        "runs": figures,
    }
