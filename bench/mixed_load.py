"""5. Mixed load over HTTP: 16 clients, 70% board reads, 20% moves, 10% creates.

The board starts with 1,000 tasks. A move takes a random known task to a random other
step, so some moves hit a full limited step: those 409 wip_limit_reached are designed
refusals, counted apart from errors.
"""

import asyncio
import random
import time

import orjson

from bench.common import HttpConnection, cpu_spread, healthz_ceiling, percentile, spread
from bench.fixtures import bulk_tasks, kanban
from boards.changes import reconcile_board
from boards.models import Task

START_TASKS = 1000


async def _load(port, key, workflow, steps, task_ids, clients: int, duration: float, seed: int):
    step_ids = [str(s.pk) for s in steps]
    board_path = f"/api/v1/workflows/{workflow.pk}/board/"
    latencies = {"read": [], "move": [], "create": []}
    outcomes: dict = {}
    conns = [HttpConnection(port, {"Authorization": f"Token {key}"}) for _ in range(clients)]
    for conn in conns:
        await conn.open()
    started = time.perf_counter()
    deadline = started + duration

    async def client(i):
        rng = random.Random(seed * 1000 + i)
        conn = conns[i]
        while time.perf_counter() < deadline:
            roll = rng.random()
            start = time.perf_counter()
            if roll < 0.7:
                kind = "read"
                status, body = await conn.request("GET", board_path)
                ok = status == 200
            elif roll < 0.9:
                kind = "move"
                status, body = await conn.request(
                    "POST",
                    f"/api/v1/tasks/{rng.choice(task_ids)}/move/",
                    {"step_id": rng.choice(step_ids)},
                )
                ok = status in (200, 202)
            else:
                kind = "create"
                status, body = await conn.request(
                    "POST", "/api/v1/tasks/", {"step_id": step_ids[0], "title": f"mixed {i}"}
                )
                ok = status in (201, 202)
                if ok:
                    task_ids.append(orjson.loads(body)["id"])
            latencies[kind].append(time.perf_counter() - start)
            if ok:
                label = f"{kind} ok"
            elif status == 409 and orjson.loads(body).get("code") == "wip_limit_reached":
                label = f"{kind} 409 wip_limit_reached"
            else:
                label = f"{kind} error {status}"
            outcomes[label] = outcomes.get(label, 0) + 1

    try:
        await asyncio.gather(*(client(i) for i in range(clients)))
    finally:
        for conn in conns:
            await conn.close()
    return latencies, time.perf_counter() - started, outcomes


def run(*, workspace, key: str, port: int, meter, clients: int, duration: float, reps: int, ceiling_s: float) -> dict:
    """Each repetition first measures the /healthz ceiling with the same clients, so the
    throughput's ratio to it compares figures of the same minute."""
    runs = []
    for rep in range(reps):
        workflow, steps = kanban(workspace, "Mixed load")
        bulk_tasks(steps[0], START_TASKS, label="Mixed")
        reconcile_board(workflow_id=workflow.pk)
        ids = [str(pk) for pk in Task.objects.filter(workflow=workflow).values_list("id", flat=True)]
        ceiling = healthz_ceiling(port, meter, clients, ceiling_s)
        before = meter.sample()
        latencies, elapsed, outcomes = asyncio.run(_load(port, key, workflow, steps, ids, clients, duration, rep))
        every = [v for values in latencies.values() for v in values]
        errors = sum(n for label, n in outcomes.items() if " error " in label)
        runs.append(
            {
                "cpu_ms": meter.per_op(before, len(every)),
                "healthz_rate": ceiling["rate"],
                "ratio_to_healthz": len(every) / elapsed / ceiling["rate"],
                "rate": len(every) / elapsed,
                "p50_ms": percentile([v * 1000 for v in every], 50),
                "p99_ms": percentile([v * 1000 for v in every], 99),
                "by_kind": {
                    kind: {
                        "ops": len(values),
                        "p50_ms": percentile([v * 1000 for v in values], 50),
                        "p99_ms": percentile([v * 1000 for v in values], 99),
                    }
                    for kind, values in latencies.items()
                },
                "outcomes": outcomes,
                "errors": errors,
            }
        )
    return {
        "clients": clients,
        "duration_s": duration,
        "repetitions": reps,
        "start_tasks": START_TASKS,
        "rate": spread([r["rate"] for r in runs]),
        "healthz_rate": spread([r["healthz_rate"] for r in runs]),
        "ratio_to_healthz": spread([r["ratio_to_healthz"] for r in runs]),
        "move_p99_ms": spread([r["by_kind"]["move"]["p99_ms"] for r in runs]),
        "cpu_ms": cpu_spread([r["cpu_ms"] for r in runs]),
        "p50_ms": spread([r["p50_ms"] for r in runs]),
        "p99_ms": spread([r["p99_ms"] for r in runs]),
        "errors": sum(r["errors"] for r in runs),
        "runs": runs,
    }
