"""Flow figures on a board with a long history: `python bench/flow.py [--events 1000000]`.

Creates a fresh PostgreSQL database beside DATABASE_URL's (suffix `_flowbench`), migrates
it, writes a board's history with INSERT ... SELECT generate_series (tasks of ten state
events each, spread over a year: back and forth between the steps, some forced, one in ten
blocked for a while, archived at the end), then times every `/flow/` endpoint (or --only
these) through the API for the 90 days ending with the history (median of --reps rounds, each
asking every endpoint in turn, each answer computed: the cache is cleared first; then once
more as kept for the board's version, flow/cache.py) and prints the EXPLAIN
ANALYZE plan of each statement on TaskEvent. With --reuse, a database a previous run wrote
is kept (the board is written once and measured many times).
Standalone: not part of bench/run.py yet.
"""

import argparse
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ENDPOINTS = [
    "cfd",
    "wip",
    "cycle-times",
    "throughput",
    "aging",
    "limits",
    "queues",
    "forecast",
    "sle",
    "advice",
    "blockers",
    "efficiency",
    "experiments",
]
# The forecast's question, on top of the window (its history).
QUESTION = {"forecast": {"items": "500", "seed": "1"}}
# In Progress's limit changes, in days before the history's end (limit before, after): what
# the limit experiments compare.
LIMIT_CHANGES = [(60, 5, 4), (40, 4, 6), (20, 6, 5)]
EVENTS_PER_TASK = 10
# The step (by position) each of a task's events puts it in; the last one archives it.
PATH = [0, 1, 2, 1, 2, 3, 2, 3, 4, 4]


def fresh_database(url: str) -> None:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(psycopg.conninfo.make_conninfo(url, dbname="postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def backend_cpu(pid: int) -> float:
    """CPU seconds (user + system) of a PostgreSQL backend on this machine: on a shared
    machine, less noisy than wall time (parallel workers are not counted)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_exists(url: str) -> bool:
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(psycopg.conninfo.make_conninfo(url, dbname="postgres"), autocommit=True) as conn:
        return conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None


def write_history(workflow, steps, events: int) -> None:
    from django.db import connection

    tasks = events // EVENTS_PER_TASK
    path_steps = ", ".join(f"'{steps[i].pk}'::uuid" for i in PATH)
    with connection.cursor() as cursor:
        cursor.execute(
            f"""
            INSERT INTO boards_taskevent
                (workflow_id, task_id, kind, from_step_id, to_step_id, actor_id, reason, at, detail)
            SELECT %s::uuid, md5(t::text)::uuid,
                   CASE WHEN k = 0 THEN 'created'
                        WHEN k = 9 THEN 'archived'
                        WHEN k = 2 AND t %% 40 = 0 THEN 'forced'
                        WHEN k IN (1, 5) THEN 'pulled'
                        ELSE 'moved' END,
                   CASE WHEN k = 0 THEN NULL ELSE (ARRAY[{path_steps}])[k] END,
                   CASE WHEN k = 9 THEN NULL ELSE (ARRAY[{path_steps}])[k + 1] END,
                   NULL,
                   CASE WHEN k = 2 AND t %% 40 = 0 THEN 'hotfix' ELSE '' END,
                   now() - interval '365 days' + t * (interval '365 days' / %s)
                       + k * (interval '5 hours' + (t %% 37) * interval '1 hour'),
                   jsonb_build_object('version', t * 10 + k)
            FROM generate_series(0, %s - 1) AS g(n),
                 LATERAL (SELECT n / {EVENTS_PER_TASK} AS t, n %% {EVENTS_PER_TASK} AS k) AS x
            WHERE now() - interval '365 days' + t * (interval '365 days' / %s)
                       + k * (interval '5 hours' + (t %% 37) * interval '1 hour') <= now()
            """,
            [str(workflow.pk), tasks, tasks * EVENTS_PER_TASK, tasks],
        )
        # One task in ten is blocked for two hours after its fourth event (cycle times read
        # the blocked part of each cycle).
        cursor.execute(
            """
            INSERT INTO boards_taskevent
                (workflow_id, task_id, kind, from_step_id, to_step_id, actor_id, reason, at, detail)
            SELECT %s::uuid, md5(t::text)::uuid, b.kind, NULL, NULL, NULL, b.reason, x.at, '{}'::jsonb
            FROM generate_series(0, %s - 1, 10) AS g(t),
                 LATERAL (SELECT now() - interval '365 days' + t * (interval '365 days' / %s)
                                 + 3 * (interval '5 hours' + (t %% 37) * interval '1 hour') AS at3) AS e,
                 (VALUES ('blocked', 'waiting on review', interval '1 hour'),
                         ('unblocked', '', interval '3 hours')) AS b(kind, reason, after),
                 LATERAL (SELECT e.at3 + b.after AS at) AS x
            WHERE x.at <= now()
            """,
            [str(workflow.pk), tasks, tasks],
        )
        # The tasks still live at the end of the history sit in In Progress (aging reads them).
        cursor.execute(
            """
            INSERT INTO boards_task (id, workflow_id, step_id, lane_id, title, description, priority, position,
                                     is_ephemeral, admitted, created_at, updated_at, entered_step_at, blocked_reason,
                                     class_of_service, checklist, due_all_day, label_ids, comment_count, blocked_by)
            SELECT task_id, %s::uuid, %s::uuid, %s::uuid, 'Task ' || task_id, '', 2, 0, false, true,
                   MIN(at), MAX(at), MAX(at), '', 'standard', '{"done": 0, "total": 0}'::jsonb, false,
                   '[]'::jsonb, 0, '[]'::jsonb
            FROM boards_taskevent WHERE workflow_id = %s::uuid
            GROUP BY task_id HAVING COUNT(*) FILTER (WHERE kind = 'archived') = 0
            """,
            [str(workflow.pk), str(steps[1].pk), str(workflow.lanes.get().pk), str(workflow.pk)],
        )
        # As autovacuum would on an append-only table: the index-only scans need the visibility map.
        cursor.execute("VACUUM ANALYZE boards_taskevent")
        cursor.execute("ANALYZE boards_task")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--days", type=int, default=90)
    parser.add_argument("--no-plans", action="store_true")
    parser.add_argument("--reuse", action="store_true", help="keep the board a previous run wrote")
    parser.add_argument("--only", help="these endpoints, comma-separated (default: all)")
    args = parser.parse_args()
    endpoints = args.only.split(",") if args.only else ENDPOINTS
    if unknown := set(endpoints) - set(ENDPOINTS):
        parser.error(f"unknown endpoints: {', '.join(sorted(unknown))}")

    base = os.environ.get("DATABASE_URL") or "postgresql://postgres@127.0.0.1:5432/kandev_bench"
    url = base.split("?")[0] + "_flowbench"
    reuse = args.reuse and database_exists(url)
    if not reuse:
        fresh_database(url)
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
    os.environ.setdefault("SECRET_KEY", "bench-" + secrets.token_hex(24))  # production mode refuses the dev key
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.cache import cache
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone
    from rest_framework.test import APIClient

    from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
    from workflows.models import ConfigChange, LimitScope, Role, StepKind, Workflow

    call_command("migrate", verbosity=0)
    if reuse:
        user = get_user_model().objects.get(username="bench")
        workflow = Workflow.objects.get(name="Flow bench")
    else:
        user = UserFactory(username="bench")
        workflow = WorkflowFactory(name="Flow bench")
        MembershipFactory(workspace=workflow.workspace, user=user, role=Role.OWNER)
        names = [
            ("Backlog", 0, StepKind.BACKLOG),
            ("In Progress", 5, StepKind.ACTIVE),
            ("Review", 3, StepKind.ACTIVE),
            ("Test", 2, StepKind.ACTIVE),
            ("Done", 0, StepKind.DONE),
        ]
        steps = [
            StepFactory(workflow=workflow, name=n, position=i, wip_limit=limit, kind=kind)
            for i, (n, limit, kind) in enumerate(names)
        ]
        for days_ago, before, after in LIMIT_CHANGES:
            ConfigChange.objects.create(
                workspace_id=workflow.workspace_id,
                workflow=workflow,
                scope=LimitScope.STEP,
                subject_id=str(steps[1].pk),
                name=steps[1].name,
                field="wip_limit",
                before=before,
                after=after,
                at=timezone.now() - timezone.timedelta(days=days_ago),
            )
        started = time.perf_counter()
        write_history(workflow, steps, args.events)
        print(f"history written in {time.perf_counter() - started:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*), MAX(at) FROM boards_taskevent")
        count, last = cursor.fetchone()
    print(f"history: {count} events, the last at {last.isoformat()}")

    client = APIClient()
    client.force_authenticate(user)
    to = last  # the window ends with the history, also when the board is reused later
    window = {"from": (to - timezone.timedelta(days=args.days)).isoformat(), "to": to.isoformat()}
    plans = {}
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    print(
        f"\n{'endpoint':<14}{'median ms':>10}{'min ms':>9}{'max ms':>9}{'cpu ms':>9}{'queries':>9}{'kept ms':>9}"
        f"  ({args.days}-day window, {args.reps} runs)"
    )
    asked = {
        # The experiments look back `days` from now, not over a window.
        name: {**({"days": str(min(args.days, 183))} if name == "experiments" else window), **QUESTION.get(name, {})}
        for name in endpoints
    }
    times, cpu, queries, kept = {n: [] for n in endpoints}, {n: [] for n in endpoints}, {}, {}
    # Rounds of every endpoint in turn: a slower stretch of the machine weighs on all alike.
    for _ in range(args.reps):
        for name in endpoints:
            url = f"/api/v1/workflows/{workflow.pk}/flow/{name}/"
            cache.clear()  # each answer computed: not the one kept for the board's version (flow/cache.py)
            with CaptureQueriesContext(connection) as captured:
                t0, c0 = time.perf_counter(), time.process_time() + backend_cpu(backend)
                response = client.get(url, asked[name])
                times[name].append((time.perf_counter() - t0) * 1000)
                cpu[name].append((time.process_time() + backend_cpu(backend) - c0) * 1000)
            assert response.status_code == 200, response.content[:300]
            plans[name] = [q["sql"] for q in captured.captured_queries if "boards_taskevent" in q["sql"]]
            queries[name] = len(captured)  # read before the next request (Django empties the log then)
            t0 = time.perf_counter()
            assert client.get(url, asked[name]).status_code == 200
            kept[name] = (time.perf_counter() - t0) * 1000  # the same question again: the kept answer
    for name in endpoints:
        print(
            f"{name:<14}{statistics.median(times[name]):>10.0f}{min(times[name]):>9.0f}{max(times[name]):>9.0f}"
            f"{statistics.median(cpu[name]):>9.0f}{queries[name]:>9}{kept[name]:>9.1f}"
        )

    if args.no_plans:
        return
    for name, statements in plans.items():
        for statement in statements:
            # A statement may open with a SET LOCAL for itself (the limit ledger's jit = off).
            setting, query = statement.split("; ", 1) if statement.startswith("SET LOCAL") else (None, statement)
            explain = "EXPLAIN (ANALYZE, BUFFERS) " + query
            with connection.cursor() as cursor:
                cursor.execute(f"{setting}; {explain}" if setting else explain)
                if setting:
                    cursor.nextset()
                plan = "\n".join(row[0] for row in cursor.fetchall())
            print(f"\n--- {name} ---\n{plan}")


if __name__ == "__main__":
    main()
