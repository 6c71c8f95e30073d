"""CPU per create and per move, two source trees interleaved in one sitting (issue 26).

`python bench/write_cpu.py BEFORE_TREE AFTER_TREE [--rounds 4] [--seconds 3] [--clients 16]`
from this tree, with DATABASE_URL and REDIS_URL set: one fresh suite database (as
bench/run.py makes it), one server per tree on it (`uvicorn --workers 2`, started in that
tree), and in each round, the two servers in turn (the order alternating), `GET /healthz`,
then creates and moves as bench/request_cpu.py makes them. CPU per request from /proc: the
server's processes, the database's PostgreSQL backends (the idle server's cost nothing) and
Redis. Then the statements each tree's create and move send (`--statements`: in-process,
through Django's test client, on a 20-task board).
"""

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import prepare, warm_up  # noqa: E402

PARTS = ("total", "server", "postgres", "redis")


def statements() -> str:
    """Round trips and statements of one create and one move (the last of three each)."""
    import itertools
    import random

    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_test_environment

    from bench import fixtures, request_cpu

    setup_test_environment()
    fixtures._names = itertools.count(random.randrange(10**9))
    _, workspace, key = fixtures.owner_with_token(f"statements-{os.getpid()}")
    workflow, steps = request_cpu.two_columns(workspace, "Statements", 20)
    ids = request_cpu.task_ids(workflow)
    client = Client(HTTP_AUTHORIZATION=f"Token {key}")
    seen = []

    def wrapper(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    def count(path, body):
        seen.clear()
        with connection.execute_wrapper(wrapper):
            response = client.post(path, body, content_type="application/json")
        assert response.status_code in (200, 201), response.content
        return f"{len(seen)} round trips, {sum(s.count('; ') + 1 for s in seen)} statements"

    for i in range(3):
        create = count("/api/v1/tasks/", {"step_id": str(steps[0].pk), "title": "x"})
        move = count(f"/api/v1/tasks/{ids[i]}/move/", {"step_id": str(steps[1].pk)})
    return f"create: {create}; move: {move} (BEGIN and COMMIT besides)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--statements", action="store_true", help="(internal) print one tree's statement counts")
    args = parser.parse_args()
    if args.statements:  # run in the measured tree: its code, this tree's bench fixtures
        sys.path.insert(0, os.getcwd())
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
        import django

        django.setup()
        print(statements())
        return 0

    dsn, _ = prepare()
    from django.core.management import call_command

    from bench import request_cpu
    from bench.common import CpuMeter, healthz_ceiling
    from bench.fixtures import kanban, owner_with_token
    from tests.servers import Server

    _, workspace, key = owner_with_token()
    warm, _ = kanban(workspace, "Warm-up")
    call_command("collectstatic", interactive=False, verbosity=0)
    database = dsn.rsplit("/", 1)[1]
    boards = {}
    for kind, tasks in (("create", 0), ("move", request_cpu.COLUMN)):
        made = [request_cpu.two_columns(workspace, f"CPU {kind}", tasks) for _ in range(args.clients)]
        boards[kind] = [(w, s, request_cpu.task_ids(w), {}) for w, s in made]

    def server(tree: str) -> Server:
        made = Server(dict(os.environ), workers=2)
        made.command = ["bash", "-c", f"cd {tree} && exec {' '.join(made.command)}"]
        return made

    servers = {"before": server(args.before), "after": server(args.after)}
    figures = {name: {kind: [] for kind in ("healthz", "create", "move")} for name in servers}
    failed = {name: {kind: 0 for kind in ("create", "move")} for name in servers}
    try:
        for made in servers.values():
            made.start(timeout=300)  # a loaded machine starts two workers slowly
            asyncio.run(warm_up(made.port, key, warm.pk))
            for kind in ("create", "move"):
                request_cpu.writes(made.port, key, args.clients, 1.0, kind, boards[kind], 99)
        for round_ in range(args.rounds):
            for name in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                made = servers[name]
                meter = CpuMeter(made.process.pid, database)
                figures[name]["healthz"].append(healthz_ceiling(made.port, meter, args.clients, args.seconds)["cpu_ms"])
                for kind in ("create", "move"):
                    before = meter.sample()
                    lat, _, outcomes = request_cpu.writes(
                        made.port, key, args.clients, args.seconds, kind, boards[kind], round_
                    )
                    cpu = meter.per_op(before, len(lat))
                    figures[name][kind].append(cpu)
                    errors = {label: n for label, n in outcomes.items() if label != "ok"}
                    failed[name][kind] += sum(errors.values())
                    print(
                        f"round {round_} {name:6} {kind:6} n={len(lat):5} "
                        + " ".join(f"{part}={cpu[part]:.2f}" for part in PARTS)
                        + f" {errors or ''} load={os.getloadavg()[0]:.1f}",
                        flush=True,
                    )
    finally:
        for made in servers.values():
            made.stop()

    print("\nmedians, ms of CPU per request (total: server + PostgreSQL + Redis):")
    for kind in ("healthz", "create", "move"):
        row = {name: {p: statistics.median(f[p] for f in figures[name][kind]) for p in PARTS} for name in servers}
        cut = 1 - row["after"]["total"] / row["before"]["total"]
        print(
            f"{kind:7} "
            + " | ".join(
                f"{name} {row[name]['total']:.2f} (server {row[name]['server']:.2f}, PostgreSQL"
                f" {row[name]['postgres']:.2f}, Redis {row[name]['redis']:.2f})"
                for name in servers
            )
            + f" | cut {cut:.0%}"
        )
        for name in servers:
            print(f"    {name} by round: " + ", ".join(f"{f['total']:.2f}" for f in figures[name][kind]))
            if failed[name].get(kind):  # e.g. an old tree's writes on this tree's schema
                print(f"    {name}: {failed[name][kind]} requests failed; its figure is not comparable")
    env = dict(os.environ, DATABASE_URL=dsn, DEBUG="1")
    for name, tree in (("before", args.before), ("after", args.after)):
        command = [sys.executable, str(ROOT / "bench" / "write_cpu.py"), "--statements", tree, tree]
        done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True)
        counted = done.stdout.strip().splitlines()[-1] if done.returncode == 0 else "not counted (failed here)"
        print(f"{name}: {counted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
