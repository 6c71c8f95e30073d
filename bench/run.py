"""kandev's benchmark suite: `python bench/run.py --db postgres [--quick]`.

Creates a fresh PostgreSQL database beside DATABASE_URL's (suffix `_suite`), migrates it,
serves it with `uvicorn kandev.asgi:application --workers 2` on a free loopback port (Redis
channel layer from REDIS_URL), runs the six benchmarks, and writes
bench/results/<timestamp>.json and the generated part of docs/benchmarks.md.
"""

import argparse
import asyncio
import datetime
import os
import platform
import secrets
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_DSN = "postgresql://postgres@127.0.0.1:5432/kandev_bench"
DEFAULT_REDIS = "redis://127.0.0.1:6379/4"

FULL = {
    "threads": 16,
    "admission_s": 5.0,
    "admission_reps": 5,
    "board_sizes": (1000, 2000, 5000, 20000),
    "board_samples": 15,
    "after_change_samples": 200,
    "after_change_reps": 5,
    "cascade_ks": (1, 10, 100),
    "cascade_reps": 5,
    "mixed_s": 60.0,
    "mixed_reps": 3,
    "viewers": 200,
    "fanout_moves": 60,
    "fanout_gap_s": 0.05,
    "reorder_column": 1000,
    "reorder_moves": 200,
    "reorder_counted": 10,
    "fanout_reps": 3,
    "cpu_s": 4.0,
    "cpu_reps": 5,
    "cpu_reads": 100,
}
QUICK = FULL | {
    "admission_s": 2.0,
    "admission_reps": 3,
    "board_samples": 5,
    "after_change_samples": 100,
    "cascade_reps": 3,
    "mixed_s": 15.0,
    "mixed_reps": 1,
    "fanout_moves": 20,
    "reorder_moves": 60,
    "fanout_reps": 2,
    "cpu_s": 2.0,
    "cpu_reps": 3,
    "cpu_reads": 40,
}
SECTIONS = ("admission", "cpu", "board", "cards", "after_change", "fanout", "cascade", "mixed", "reorder")


def fresh_database(base_dsn: str) -> str:
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    info = conninfo_to_dict(base_dsn)
    name = f"{info.get('dbname', 'kandev')}_suite"
    with psycopg.connect(make_conninfo(base_dsn, dbname="postgres"), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    user = info.get("user", "postgres")
    return f"postgresql://{user}@{info.get('host', '127.0.0.1')}:{info.get('port', 5432)}/{name}"


def machine(dsn: str, redis_url: str) -> dict:
    import django
    import psycopg
    import redis
    import uvicorn

    with open("/proc/meminfo") as f:
        mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "?")
    with psycopg.connect(dsn) as conn:
        pg = conn.execute("SHOW server_version").fetchone()[0]
        sync = conn.execute("SHOW synchronous_commit").fetchone()[0]
    return {
        "cpu": model,
        "cores": os.cpu_count(),
        "memory_gb": round(mem_kb / 1024 / 1024, 1),
        "os": platform.platform(),
        "python": platform.python_version(),
        "django": django.get_version(),
        "postgresql": pg,
        "synchronous_commit": sync,
        "psycopg": psycopg.__version__,
        "uvicorn": uvicorn.__version__,
        "redis": redis.Redis.from_url(redis_url).info("server")["redis_version"],
        "load_average_at_start": os.getloadavg(),
    }


def prepare() -> tuple[str, str]:
    """A fresh, migrated suite database, and Django set up against it."""
    dsn = fresh_database(os.environ.get("DATABASE_URL") or DEFAULT_DSN)
    redis_url = os.environ.get("REDIS_URL") or DEFAULT_REDIS
    os.environ.update(
        DATABASE_URL=dsn,
        REDIS_URL=redis_url,
        DJANGO_SETTINGS_MODULE="kandev.settings",
        DEBUG="0",
        LOG_LEVEL="WARNING",
        # Production mode refuses the development key; the servers share this run's key.
        SECRET_KEY=os.environ.get("SECRET_KEY") or "bench-" + secrets.token_hex(24),
        # The bench's one account creates more live tasks than the default quota lets any
        # keep; the check stays on (and is measured), out of the way.
        KANDEV_MAX_OPEN_TASKS_PER_USER=os.environ.get("KANDEV_MAX_OPEN_TASKS_PER_USER") or "100000000",
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return dsn, redis_url


async def warm_up(port: int, key: str, workflow_id):
    """Both workers import, connect and fill their caches before anything is timed."""
    from bench.common import HttpConnection

    conns = [HttpConnection(port, {"Authorization": f"Token {key}"}) for _ in range(8)]

    async def one(conn):
        for _ in range(25):
            await conn.request("GET", f"/api/v1/workflows/{workflow_id}/board/")
        await conn.close()

    await asyncio.gather(*(one(c) for c in conns))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", choices=["postgres"], required=True, help="the database to measure")
    parser.add_argument("--quick", action="store_true", help="shorter runs, fewer repetitions")
    parser.add_argument("--only", nargs="+", choices=SECTIONS, help="run only these benchmarks")
    parser.add_argument("--no-docs", action="store_true", help="write the JSON only, not docs/benchmarks.md")
    parser.add_argument(
        "--server-option", action="append", default=[], metavar="OPTION", help="passed to uvicorn (repeatable)"
    )
    args = parser.parse_args(argv)
    params = QUICK if args.quick else FULL
    sections = args.only or SECTIONS

    dsn, redis_url = prepare()

    from django.core.management import call_command

    from bench import (
        admission_floor,
        board_read,
        card_fields,
        fanout,
        mixed_load,
        pull_cascade,
        reorder,
        report,
        request_cpu,
    )
    from bench.common import CpuMeter
    from bench.fixtures import kanban, owner_with_token
    from tests.servers import Server

    results = {
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "mode": "quick" if args.quick else "full",
        "params": params,
        "machine": machine(dsn, redis_url),
        "git": os.popen(f"git -C {ROOT} rev-parse --short HEAD").read().strip(),
        "server": {"name": "uvicorn", "options": args.server_option, "workers": 2},
    }
    user, workspace, key = owner_with_token()
    warm_board, _ = kanban(workspace, "Warm-up")
    # Production static files (DEBUG off serves them from the manifest), as a deployment would.
    call_command("collectstatic", interactive=False, verbosity=0)
    env = dict(os.environ)
    database = dsn.rsplit("/", 1)[1]
    with Server(env, workers=2, options=args.server_option) as server:
        asyncio.run(warm_up(server.port, key, warm_board.pk))
        meter = CpuMeter(server.process.pid, database)
        for section in sections:
            print(f"[bench] {section} ...", flush=True)
            started = time.perf_counter()
            try:
                if section == "admission":
                    results[section] = admission_floor.run(
                        dsn=dsn,
                        workspace=workspace,
                        user=user,
                        key=key,
                        port=server.port,
                        meter=meter,
                        threads=params["threads"],
                        duration=params["admission_s"],
                        reps=params["admission_reps"],
                    )
                elif section == "cpu":
                    results[section] = request_cpu.run(
                        workspace=workspace,
                        user=user,
                        key=key,
                        port=server.port,
                        meter_for=lambda exclude: CpuMeter(server.process.pid, database, exclude),
                        clients=params["threads"],
                        duration=params["cpu_s"],
                        reps=params["cpu_reps"],
                        reads=params["cpu_reads"],
                    )
                elif section == "board":
                    results[section] = board_read.run(
                        workspace=workspace,
                        user=user,
                        key=key,
                        port=server.port,
                        sizes=params["board_sizes"],
                        samples=params["board_samples"],
                    )
                elif section == "cards":
                    results[section] = card_fields.run(
                        workspace=workspace, key=key, port=server.port, samples=params["board_samples"]
                    )
                elif section == "after_change":
                    results[section] = board_read.after_change(
                        workspace=workspace,
                        user=user,
                        key=key,
                        server=server,
                        meter=meter,
                        samples=params["after_change_samples"],
                        reps=params["after_change_reps"],
                    )
                elif section == "fanout":
                    results[section] = fanout.run(
                        workspace=workspace,
                        key=key,
                        port=server.port,
                        meter=meter,
                        viewers=params["viewers"],
                        moves=params["fanout_moves"],
                        gap=params["fanout_gap_s"],
                        reps=params["fanout_reps"],
                    )
                elif section == "cascade":
                    results[section] = pull_cascade.run(
                        workspace=workspace,
                        user=user,
                        ks=params["cascade_ks"],
                        reps=params["cascade_reps"],
                    )
                elif section == "mixed":
                    results[section] = mixed_load.run(
                        workspace=workspace,
                        key=key,
                        port=server.port,
                        meter=meter,
                        clients=params["threads"],
                        duration=params["mixed_s"],
                        reps=params["mixed_reps"],
                        ceiling_s=params["admission_s"],
                    )
                elif section == "reorder":
                    results[section] = reorder.run(
                        workspace=workspace,
                        key=key,
                        server=server,
                        meter=meter,
                        column=params["reorder_column"],
                        moves=params["reorder_moves"],
                        counted=params["reorder_counted"],
                    )
            except Exception as exc:  # a broken benchmark is reported, never replaced by a figure
                traceback.print_exc()
                results[section] = {"failed": repr(exc)[:500]}
            print(f"[bench] {section} done in {time.perf_counter() - started:.0f} s", flush=True)
    results["machine"]["load_average_at_end"] = os.getloadavg()
    results["finished"] = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")

    out = ROOT / "bench" / "results"
    out.mkdir(exist_ok=True)
    path = out / f"{results['started'].replace(':', '').replace('+0000', 'Z')}.json"
    import orjson

    path.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    print(f"[bench] figures: {path}")
    markdown = report.render(results)
    print(markdown)
    print("\n".join(report.goal_lines(results)))
    if not args.no_docs:
        report.write(ROOT / "docs" / "benchmarks.md", markdown)
        print("[bench] docs/benchmarks.md updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
