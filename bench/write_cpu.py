"""CPU per create and per move, two source trees interleaved in one sitting (issue 26).

`python bench/write_cpu.py BEFORE_TREE AFTER_TREE [--rounds 4] [--seconds 3] [--clients 16]`
from this tree, with DATABASE_URL and REDIS_URL set. Each tree gets a fresh database of its
own, migrated and filled by that tree's own code (`IN_TREE`: its migrations, its
bench/fixtures.py), so an older tree is measured on its own schema; then one server per tree
(`uvicorn --workers 2`, started in that tree), and in each round the two servers in turn
(the order alternating): `GET /healthz`, then creates and moves as bench/request_cpu.py makes
them. CPU per request from /proc: the server's processes, its database's PostgreSQL backends
and Redis. Last, the statements each tree's create and move sent (counted in the tree, through
Django's test client, on a 20-task board).
"""

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import fresh_database, prepare, warm_up  # noqa: E402

PARTS = ("total", "server", "postgres", "redis")

# Run by `python -c` in a tree, on its database (DATABASE_URL): migrate it, make the
# clients' boards with the tree's own fixtures, count the statements of its third create and
# third move, and print it all as JSON. Only what every measured tree's fixtures have.
IN_TREE = """
import itertools, json, os, sys
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
import django
django.setup()
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import setup_test_environment
from bench.fixtures import bulk_tasks, kanban, owner_with_token, workflow_with_steps
from boards.models import Task

call_command("migrate", verbosity=0)
clients, column = int(sys.argv[1]), int(sys.argv[2])
_, workspace, key = owner_with_token()
names = itertools.count()

def two_columns(tasks):
    workflow, steps = workflow_with_steps(
        workspace, f"CPU {next(names)}", [{"name": "Column", "is_start_step": True}, {"name": "Other"}]
    )
    if tasks:
        bulk_tasks(steps[0], tasks, label="CPU")
    ids = [str(pk) for pk in Task.objects.filter(workflow=workflow).values_list("id", flat=True)]
    return [str(workflow.pk), [str(s.pk) for s in steps], ids]

warm, _ = kanban(workspace, "Warm-up")
boards = {"create": [two_columns(0) for _ in range(clients)], "move": [two_columns(column) for _ in range(clients)]}
setup_test_environment()
_, steps, ids = two_columns(20)
client = Client(HTTP_AUTHORIZATION=f"Token {key}")
seen = []

def counted(path, body):
    seen.clear()
    with connection.execute_wrapper(lambda execute, sql, *rest: seen.append(sql) or execute(sql, *rest)):
        response = client.post(path, body, content_type="application/json")
    assert response.status_code in (200, 201), response.content
    return f"{len(seen)} round trips, {sum(s.count('; ') + 1 for s in seen)} statements"

for i in range(3):
    create = counted("/api/v1/tasks/", {"step_id": steps[0], "title": "x"})
    move = counted(f"/api/v1/tasks/{ids[i]}/move/", {"step_id": steps[1]})
statements = f"create: {create}; move: {move} (BEGIN and COMMIT besides)"
print(json.dumps({"key": key, "warm": str(warm.pk), "boards": boards, "statements": statements}))
"""


def report_stretch(round_: int, name: str, kind: str, ops: int, cpu: dict, outcomes: dict) -> int:
    """Print one stretch's CPU per request by part; returns how many of its requests failed."""
    errors = {label: n for label, n in outcomes.items() if label != "ok"}
    print(
        f"round {round_} {name:8} {kind:6} n={ops:5} "
        + " ".join(f"{part}={cpu[part]:.2f}" for part in PARTS)
        + f" {errors or ''} load={os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return sum(errors.values())


def median_text(name: str, stretches: list[dict]) -> tuple[float, str]:
    """The median total of `name`'s stretches, and it written with its parts' medians."""
    row = {part: statistics.median(cpu[part] for cpu in stretches) for part in PARTS}
    return row["total"], (
        f"{name} {row['total']:.2f} (server {row['server']:.2f}, PostgreSQL {row['postgres']:.2f},"
        f" Redis {row['redis']:.2f})"
    )


def in_tree(tree: str, dsn: str, clients: int, column: int) -> dict:
    """The tree's database made and filled by the tree's code (`IN_TREE`)."""
    env = dict(os.environ, DATABASE_URL=dsn)
    command = [sys.executable, "-c", IN_TREE, str(clients), str(column)]
    done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{tree}: its database could not be made:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()

    dsn, _ = prepare()  # this tree's: its settings for the servers, its static files
    from django.core.management import call_command

    from bench import request_cpu
    from bench.common import CpuMeter, healthz_ceiling
    from tests.servers import Server

    call_command("collectstatic", interactive=False, verbosity=0)
    trees = {"before": args.before, "after": args.after}
    dsns = {name: fresh_database(f"{dsn}_{name}") for name in trees}
    filled = {name: in_tree(tree, dsns[name], args.clients, request_cpu.COLUMN) for name, tree in trees.items()}

    # Each client's board, as bench/request_cpu.py takes it; made once, as its last dict
    # follows where each task is, from round to round, so that every move crosses steps.
    boards = {
        name: {
            kind: [(workflow, [SimpleNamespace(pk=pk) for pk in steps], ids, {}) for workflow, steps, ids in listed]
            for kind, listed in filled[name]["boards"].items()
        }
        for name in trees
    }

    def server(name: str) -> Server:
        made = Server(dict(os.environ, DATABASE_URL=dsns[name]), workers=2)
        made.command = ["bash", "-c", f"cd {trees[name]} && exec {' '.join(made.command)}"]
        return made

    servers = {name: server(name) for name in trees}
    figures = {name: {kind: [] for kind in ("healthz", "create", "move")} for name in servers}
    failed = {name: {kind: 0 for kind in ("create", "move")} for name in servers}
    try:
        for name, running in servers.items():
            key = filled[name]["key"]
            running.start(timeout=300)  # a loaded machine starts two workers slowly
            asyncio.run(warm_up(running.port, key, filled[name]["warm"]))
            for kind in ("create", "move"):
                request_cpu.writes(running.port, key, args.clients, 1.0, kind, boards[name][kind], 99)
        for round_ in range(args.rounds):
            for name in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                running, key = servers[name], filled[name]["key"]
                meter = CpuMeter(running.process.pid, dsns[name].rsplit("/", 1)[1])
                figures[name]["healthz"].append(
                    healthz_ceiling(running.port, meter, args.clients, args.seconds)["cpu_ms"]
                )
                for kind in ("create", "move"):
                    before = meter.sample()
                    lat, _, outcomes = request_cpu.writes(
                        running.port, key, args.clients, args.seconds, kind, boards[name][kind], round_
                    )
                    cpu = meter.per_op(before, len(lat))
                    figures[name][kind].append(cpu)
                    failed[name][kind] += report_stretch(round_, name, kind, len(lat), cpu, outcomes)
    finally:
        for running in servers.values():
            running.stop()

    print("\nmedians, ms of CPU per request (total: server + PostgreSQL + Redis):")
    for kind in ("healthz", "create", "move"):
        (before, before_text), (after, after_text) = (median_text(name, figures[name][kind]) for name in servers)
        print(f"{kind:7} {before_text} | {after_text} | cut {1 - after / before:.0%}")
        for name in servers:
            print(f"    {name} by round: " + ", ".join(f"{f['total']:.2f}" for f in figures[name][kind]))
            if failed[name].get(kind):
                print(f"    {name}: {failed[name][kind]} requests failed; its figure is not comparable")
    for name in trees:
        print(f"{name}: {filled[name]['statements']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
