"""What flow analytics cost the other users of a server: `python bench/flow_load.py`.

Against a real uvicorn (tests.servers.Server, one worker process, production settings) on
a fresh PostgreSQL database beside DATABASE_URL's (suffix `_flowload`), with an empty
board of 50 steps (the most a board may have) and a Kanban board of 500 tasks:

1. after one small request (the process's first loads what every request uses), each CFD
   request below, alone: its status, the worker's CPU seconds, and its resident
   memory before, after and at its peak (VmHWM); the first is the worst request the old
   window check allowed (hourly over 366 days), the last the worst one the work bound
   allows (hourly, as many days as fit);
2. the Kanban board's read latency (`GET /board/` of another user), alone and while eight
   users each send the worst allowed CFD request over and over, and the worker's memory
   afterwards.

Prints the figures; `--json` prints them as JSON too.
"""

import argparse
import os
import secrets
import statistics
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

STEPS = 50
ANALYSTS = 8
READS = 40


def memory_mb(pid: int) -> dict:
    """The process's resident memory now and at its peak (VmRSS, VmHWM), in MB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) / 1024
    return {"rss_mb": fields["VmRSS"], "peak_mb": fields["VmHWM"]}


def build(url: str) -> dict:
    """The boards and tokens, written by this process into the fresh database."""
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kandev.settings")
    os.environ.setdefault("SECRET_KEY", "bench-" + secrets.token_hex(24))
    import django

    django.setup()
    from bench.fixtures import bulk_tasks, kanban, owner_with_token, workflow_with_steps
    from boards.changes import reconcile_board
    from workflows.models import Membership, Role

    _, workspace, reader_key = owner_with_token("reader")
    board, (backlog, *_rest, done) = kanban(workspace, "Read")
    bulk_tasks(backlog, 450)
    bulk_tasks(done, 50)
    reconcile_board(workflow_id=board.pk)
    owner, flow_workspace, _ = owner_with_token("analyst-0")
    wide, _steps = workflow_with_steps(flow_workspace, "Wide", [{"name": f"Step {i}"} for i in range(STEPS)])
    keys = []
    for i in range(ANALYSTS):
        user, _, key = owner_with_token(f"analyst-{i}")
        Membership.objects.get_or_create(workspace=flow_workspace, user=user, defaults={"role": Role.MEMBER})
        keys.append(key)
    from django.db import connections

    connections.close_all()
    return {"board": str(board.pk), "wide": str(wide.pk), "reader": reader_key, "analysts": keys}


def cfd_path(world: dict, days: int, interval: str) -> str:
    return (
        f"/api/v1/workflows/{world['wide']}/flow/cfd/?interval={interval}"
        f"&from=2025-01-01T00:00:00Z&to={_plus_days('2025-01-01', days)}T00:00:00Z"
    )


def _plus_days(day: str, days: int) -> str:
    from datetime import date, timedelta

    return (date.fromisoformat(day) + timedelta(days=days)).isoformat()


def alone(server, world: dict, days: int, interval: str) -> dict:
    import httpx

    from bench.common import process_cpu_seconds

    pid = server.process.pid
    before = memory_mb(pid)
    cpu = process_cpu_seconds(pid)
    start = time.perf_counter()
    response = httpx.get(
        server.url + cfd_path(world, days, interval),
        headers={"Authorization": f"Token {world['analysts'][0]}"},
        timeout=120,
    )
    wall = time.perf_counter() - start
    after = memory_mb(pid)
    detail = response.json().get("errors", {}).get("interval") if response.status_code == 400 else None
    return {
        "request": f"cfd interval={interval}, {days} days x {STEPS} steps",
        "status": response.status_code,
        "wall_s": round(wall, 3),
        "cpu_s": round(process_cpu_seconds(pid) - cpu, 3),
        "rss_before_mb": round(before["rss_mb"]),
        "rss_after_mb": round(after["rss_mb"]),
        "peak_mb": round(after["peak_mb"]),
        "refusal": detail,
    }


def board_reads(server, world: dict, n: int) -> list[float]:
    import httpx

    times = []
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Token {world['reader']}"}) as client:
        client.get(f"/api/v1/workflows/{world['board']}/board/", timeout=120)  # warm
        for _ in range(n):
            start = time.perf_counter()
            assert client.get(f"/api/v1/workflows/{world['board']}/board/", timeout=120).status_code == 200
            times.append(time.perf_counter() - start)
    return times


def under_analytics(server, world: dict, days: int, interval: str, reads: int = READS) -> dict:
    """Board reads while ANALYSTS users each loop on the CFD request."""
    import httpx

    stop = threading.Event()
    statuses: dict = {}

    def analyst(key):
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Token {key}"}, timeout=300) as client:
            while not stop.is_set():
                status = client.get(cfd_path(world, days, interval)).status_code
                statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=analyst, args=(key,)) for key in world["analysts"]]
    for thread in threads:
        thread.start()
    try:
        times = board_reads(server, world, reads)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    return {"reads": summary(times), "analytics_statuses": statuses, **memory_mb(server.process.pid)}


def summary(times: list[float]) -> dict:
    ordered = sorted(times)
    return {
        "median_s": round(statistics.median(ordered), 3),
        "p90_s": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
        "max_s": round(ordered[-1], 3),
        "n": len(ordered),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--reads", type=int, default=READS, help="board reads timed under the analytics load")
    args = parser.parse_args()

    from tests.servers import Server, fresh_database, production_env

    with fresh_database("flowload") as url:
        world = build(url)
        from django.conf import settings

        most = getattr(settings, "KANDEV_FLOW_MAX_POINTS", None)
        # The worst hourly window the bound allows: points = hours + 1, times the steps.
        hourly_days = (most // STEPS - 1) // 24 if most else 366
        requests = [(366, "hour"), (366, "day"), (hourly_days, "hour")]
        env = production_env(url, REDIS_URL=os.environ.get("REDIS_URL", ""))
        with Server(env) as server:
            print(f"server pid {server.process.pid}, database {urlsplit(url).path.lstrip('/')}")
            alone(server, world, 1, "day")  # warm: the process's first request loads what every request uses
            results = {"alone": [alone(server, world, days, interval) for days, interval in requests]}
            for row in results["alone"]:
                print(
                    f"{row['request']:<40} {row['status']}  wall {row['wall_s']:.2f} s  cpu {row['cpu_s']:.2f} s  "
                    f"rss {row['rss_before_mb']} -> {row['rss_after_mb']} MB (peak {row['peak_mb']} MB)"
                    + (f"\n    {row['refusal']}" if row["refusal"] else "")
                )
            served = [
                (row["cpu_s"], r) for r, row in zip(requests, results["alone"], strict=True) if row["status"] == 200
            ]
            worst = max(served)[1]
            results["reads_alone"] = summary(board_reads(server, world, READS))
            print(f"board read alone: {results['reads_alone']}")
            results["reads_under_analytics"] = under_analytics(server, world, *worst, reads=args.reads)
            print(
                f"board read with {ANALYSTS} users looping on cfd {worst[1]}ly over {worst[0]} days: "
                f"{results['reads_under_analytics']}"
            )
    if args.json:
        import json

        print(json.dumps(results))


if __name__ == "__main__":
    main()
