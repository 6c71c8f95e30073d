"""1. Admission floor ratio: raw psycopg vs kandev's admission service vs the HTTP API.

Contested: every worker creates into one step. Uncontested: each worker has a board of its
own (a kandev admission locks the whole board, so "one step each" means one board each).
The limit is high enough that nothing is refused; refusals would be counted, not hidden.
"""

import asyncio
import itertools
import time
import uuid

import psycopg
from django.db import connection, connections
from django.utils import timezone

from bench.common import (
    combine,
    connect_patiently,
    cpu_spread,
    healthz_ceiling,
    process_cpu_seconds,
    run_summary,
    spread,
    timed_http_clients,
    timed_threads,
)
from bench.fixtures import workflow_with_steps
from boards.models import Task
from workflows.models import Lane

LIMIT = 10_000_000
SCOPES = ("contested", "uncontested")
MODES = ("floor", "service", "http")

# The minimal correct admission: lock the step, count its live tasks, insert, commit.
LOCK_STEP = "SELECT id, wip_limit FROM workflows_workflowstep WHERE id = %s FOR UPDATE"
COUNT_LIVE = (
    "SELECT count(*) FROM boards_task WHERE step_id = %s AND archived_at IS NULL AND NOT is_ephemeral AND admitted"
)


def _insert_sql() -> tuple[str, list]:
    fields = list(Task._meta.concrete_fields)
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    return f"INSERT INTO boards_task ({columns}) VALUES ({marks})", fields


def floor_worker(dsn: str, workflow_id, step_id, lane_id, counters):
    insert, fields = _insert_sql()
    template = Task(workflow_id=workflow_id, step_id=step_id, lane_id=lane_id, title="", position=0)
    names = itertools.count()
    state = {}

    def setup():
        state["conn"] = connect_patiently(lambda: psycopg.connect(dsn))
        state["backend"] = state["conn"].execute("SELECT pg_backend_pid()").fetchone()[0]
        state["backend_cpu"] = process_cpu_seconds(state["backend"])

    def op():
        conn = state["conn"]
        with conn.cursor() as cur:
            cur.execute(LOCK_STEP, (step_id,))
            _, limit = cur.fetchone()
            cur.execute(COUNT_LIVE, (step_id,))
            (occupied,) = cur.fetchone()
            if limit and occupied >= limit:
                conn.rollback()
                counters["refused"] += 1
                return
            now = timezone.now()
            template.id = uuid.uuid4()
            template.title = f"floor {next(names)}"
            template.position = occupied
            template.created_at = template.updated_at = template.entered_step_at = now
            cur.execute(insert, [getattr(template, f.attname) for f in fields])
        conn.commit()

    def teardown():
        if "conn" in state:
            # Its backend's CPU while it admitted, read before the backend exits with the close.
            counters["postgres_s"].append(process_cpu_seconds(state["backend"]) - state["backend_cpu"])
            state["conn"].close()

    return setup, op, teardown


def service_worker(workflow, step, actor):
    from boards.admission import task_create

    names = itertools.count()

    def op():
        task_create(workflow=workflow, actor=actor, step=step, title=f"service {next(names)}")

    def setup():
        connect_patiently(lambda: connections["default"].ensure_connection())

    return setup, op, (lambda: connections.close_all())


def _truncate(dsn: str):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("TRUNCATE boards_taskevent, boards_task CASCADE")
        conn.execute("VACUUM ANALYZE boards_task")


def run(*, dsn: str, workspace, user, key: str, port: int, meter, threads: int, duration: float, reps: int) -> dict:
    shared, (shared_step,) = workflow_with_steps(
        workspace,
        "Admission contested",
        [
            {"name": "Intake", "is_start_step": True, "wip_limit": LIMIT},
        ],
    )
    own = [
        workflow_with_steps(
            workspace,
            "Admission uncontested",
            [
                {"name": "Intake", "is_start_step": True, "wip_limit": LIMIT},
            ],
        )
        for _ in range(threads)
    ]

    lanes = dict(Lane.objects.filter(workflow__in=[shared, *(w for w, _ in own)]).values_list("workflow_id", "pk"))

    def board_for(scope, i):
        return (shared, shared_step) if scope == "contested" else (own[i][0], own[i][1][0])

    runs = {(mode, scope): [] for mode in MODES for scope in SCOPES}
    ceiling = []
    ratios = {(mode, scope): [] for mode in ("service", "http") for scope in SCOPES}
    # Repetitions interleave the modes, so each ratio compares figures of the same minute.
    for _ in range(reps):
        for scope in SCOPES:
            figures = {}
            for mode in MODES:
                _truncate(dsn)
                counters = {"refused": 0, "postgres_s": []}  # a backend's CPU per worker
                if mode == "floor":
                    client_before = time.process_time()
                    lat, elapsed, errors = timed_threads(
                        threads,
                        duration,
                        lambda i, scope=scope, counters=counters: floor_worker(
                            dsn,
                            board_for(scope, i)[0].pk,
                            board_for(scope, i)[1].pk,
                            lanes[board_for(scope, i)[0].pk],
                            counters,
                        ),
                    )
                    outcomes = {
                        "ok": len(lat) - counters["refused"],
                        "refused": counters["refused"],
                    }
                    cpu = _floor_cpu(time.process_time() - client_before, sum(counters["postgres_s"]), len(lat))
                elif mode == "service":
                    lat, elapsed, errors = timed_threads(
                        threads,
                        duration,
                        lambda i, scope=scope: service_worker(*board_for(scope, i), user),
                    )
                    outcomes = {"ok": len(lat)}
                else:
                    before = meter.sample()
                    lat, elapsed, outcomes = asyncio.run(_http(port, key, threads, duration, scope, board_for))
                    cpu = meter.per_op(before, len(lat))
                    errors = [k for k in outcomes if k != "ok"]
                summary = run_summary(lat, elapsed, outcomes=outcomes, errors=errors[:5])
                if mode in ("floor", "http"):
                    summary["cpu_ms_per_admission"] = cpu
                runs[(mode, scope)].append(summary)
                figures[mode] = summary["rate"]
            for mode in ("service", "http"):
                ratios[(mode, scope)].append(figures[mode] / figures["floor"] if figures["floor"] else None)
        ceiling.append(healthz_ceiling(port, meter, threads, duration))
    _truncate(dsn)

    return {
        "threads": threads,
        "duration_s": duration,
        "repetitions": reps,
        "results": {f"{mode}/{scope}": combine(r) for (mode, scope), r in runs.items()},
        "ratios_to_floor": {f"{mode}/{scope}": spread(r) for (mode, scope), r in ratios.items()},
        "cpu_ms_per_http_admission": {
            scope: cpu_spread([r["cpu_ms_per_admission"] for r in runs[("http", scope)]]) for scope in SCOPES
        },
        "cpu_ms_per_floor_admission": {
            scope: cpu_spread([r["cpu_ms_per_admission"] for r in runs[("floor", scope)]]) for scope in SCOPES
        },
        "framework_ceiling": {
            "rate": spread([c["rate"] for c in ceiling]),
            "cpu_ms": cpu_spread([c["cpu_ms"] for c in ceiling]),
        },
    }


def _floor_cpu(client_seconds: float, postgres_seconds: float, ops: int) -> dict:
    """The floor's CPU per admission in the parts of an HTTP one: its client (this process's
    threads, their connects included) stands where the server would. It uses no Redis."""
    if not ops:
        return {part: None for part in ("server", "postgres", "redis", "total")}
    client, postgres = client_seconds * 1000 / ops, postgres_seconds * 1000 / ops
    return {"server": client, "postgres": postgres, "redis": 0.0, "total": client + postgres}


async def _http(port, key, clients, duration, scope, board_for):
    names = itertools.count()

    def make(conn, i):
        step_id = str(board_for(scope, i)[1].pk)

        async def op():
            status, body = await conn.request(
                "POST", "/api/v1/tasks/", {"step_id": step_id, "title": f"http {next(names)}"}
            )
            if status == 201:
                return "ok"
            if status == 409:
                return "refused"
            return f"error {status}: {body[:120]!r}"

        return op

    headers = {"Authorization": f"Token {key}"}
    return await timed_http_clients(port, headers, clients, duration, make)
