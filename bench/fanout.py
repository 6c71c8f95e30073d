"""3. Live fan-out: 200 WebSocket viewers of one board (Redis channel layer, 2 workers).

Written against the API: `/ws/workflows/<id>/` with `Authorization: Token <key>` on the
handshake (no Origin: not a browser), first message `board.snapshot`
with the version, then one message per committed change carrying the new `version`.
A driver moves tasks out of a limited step, one after another, so every move causes a pull.
The server's commit instant is not observable from outside, so latency is bracketed: from
the moment the driver sent the move (upper bound: includes the request's own processing)
and from the moment the driver got the response (the commit happened before it; a
viewer may even be faster than the driver, which shows as a negative figure).
"""

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import orjson
from django.db import connections

from bench.common import HttpConnection, cpu_spread, percentile, spread
from bench.fixtures import bulk_tasks, kanban
from boards.changes import reconcile_board
from boards.models import Task


async def _probe(port, workflow_id, key) -> str | None:
    """None when the route accepts a viewer and sends the snapshot, else why not."""
    from websockets.asyncio.client import connect

    try:
        async with connect(_url(port, workflow_id), additional_headers=_auth(key), open_timeout=10) as ws:
            first = orjson.loads(await asyncio.wait_for(ws.recv(), 10))
            if first.get("type") != "board.snapshot" or "version" not in first:
                return f"first message was {first.get('type')!r}, not board.snapshot with a version"
    except Exception as exc:  # any refusal means the route is not there (yet)
        status = getattr(getattr(exc, "response", None), "status_code", None)
        why = f"the upgrade was answered {status}" if status else repr(exc)[:200]
        return f"/ws/workflows/<id>/ is not available in this branch ({why})"
    return None


def _url(port, workflow_id):
    return f"ws://127.0.0.1:{port}/ws/workflows/{workflow_id}/"


def _auth(key) -> dict:
    return {"Authorization": f"Token {key}"}


async def _viewer(
    port,
    workflow_id,
    key,
    expected: int,
    ready: asyncio.Event,
    ready_count: list,
    viewers: int,
    out,
):
    from websockets.asyncio.client import connect

    async with connect(
        _url(port, workflow_id),
        additional_headers=_auth(key),
        open_timeout=60,
        max_size=2**24,
    ) as ws:
        snapshot = orjson.loads(await ws.recv())
        received = []
        ready_count[0] += 1
        if ready_count[0] == viewers:
            ready.set()
        try:
            while len(received) < expected:
                message = orjson.loads(await asyncio.wait_for(ws.recv(), 30))
                received.append((message.get("version"), time.perf_counter()))
        except TimeoutError:
            pass
        out.append((snapshot["version"], received))


async def _run(port, workflow, doing, done, key, viewers: int, moves: int, gap: float, db, meter):
    ready = asyncio.Event()
    ready_count = [0]
    results = []
    tasks = [
        asyncio.create_task(_viewer(port, workflow.pk, key, moves, ready, ready_count, viewers, results))
        for _ in range(viewers)
    ]
    await asyncio.wait_for(ready.wait(), 120)
    before, client_before = meter.sample(), time.process_time()
    driver = HttpConnection(port, {"Authorization": f"Token {key}"})
    await driver.open()
    loop = asyncio.get_running_loop()
    sent, answered = [], []
    done_step = str(done.pk)
    for _ in range(moves):
        task_id = await loop.run_in_executor(
            db,
            lambda: str(Task.objects.occupying().filter(step=doing).in_board_order().values_list("id", flat=True)[0]),
        )
        sent.append(time.perf_counter())
        status, body = await driver.request("POST", f"/api/v1/tasks/{task_id}/move/", {"step_id": done_step})
        answered.append(time.perf_counter())
        if status != 200:
            raise RuntimeError(f"driver move answered {status}: {body[:200]!r}")
        await asyncio.sleep(gap)
    await driver.close()
    await asyncio.gather(*tasks)
    # The suite's own process (the viewers' sockets and the driver) shares the machine's cores.
    client = (time.process_time() - client_before) * 1000 / moves
    return results, sent, answered, meter.per_op(before, moves), client


def run(*, workspace, key: str, port: int, meter, viewers: int, moves: int, gap: float, reps: int) -> dict:
    runs = []
    for _ in range(reps):
        one = _one_run(workspace=workspace, key=key, port=port, meter=meter, viewers=viewers, moves=moves, gap=gap)
        if "not_run" in one:
            return one
        runs.append(one)
    return {
        "viewers": viewers,
        "moves": moves,
        "gap_s": gap,
        "repetitions": reps,
        "connected": min(r["connected"] for r in runs),
        "messages_received": sum(r["messages_received"] for r in runs),
        "messages_missing": sum(r["messages_missing"] for r in runs),
        "viewers_reordered": sum(r["viewers_reordered"] for r in runs),
        **{
            frame: {q: spread([r[frame][q] for r in runs]) for q in ("p50", "p99", "max")}
            for frame in ("from_request_sent_ms", "from_response_ms", "move_ms")
        },
        "cpu_ms_per_move": cpu_spread([r["cpu_ms"] for r in runs]),
        "client_cpu_ms_per_move": spread([r["client_cpu_ms"] for r in runs]),
        "runs": runs,
    }


def _one_run(*, workspace, key: str, port: int, meter, viewers: int, moves: int, gap: float) -> dict:
    workflow, (backlog, doing, _review, done) = kanban(workspace, "Fan-out")
    bulk_tasks(backlog, moves + 100, label="Fan-out")
    reconcile_board(workflow_id=workflow.pk)
    why_not = asyncio.run(_probe(port, workflow.pk, key))
    if why_not:
        return {"not_run": why_not}
    db = ThreadPoolExecutor(1)
    try:
        driven = _run(port, workflow, doing, done, key, viewers, moves, gap, db, meter)
        results, sent, answered, cpu, client_cpu = asyncio.run(driven)
    finally:
        db.submit(connections.close_all).result()
        db.shutdown()
    upper, lower = [], []
    missing = reordered = 0
    for start_version, received in results:
        versions = [v for v, _ in received]
        expected = list(range(start_version + 1, start_version + 1 + moves))
        if versions != expected:
            missing += len(set(expected) - set(versions))
            reordered += int(sorted(versions) != versions)
        for version, at in received:
            index = version - start_version - 1
            if 0 <= index < moves:
                upper.append((at - sent[index]) * 1000)
                lower.append((at - answered[index]) * 1000)
    move_ms = [(a - s) * 1000 for s, a in zip(sent, answered, strict=True)]
    return {
        "viewers": viewers,
        "connected": len(results),
        "cpu_ms": cpu,
        "client_cpu_ms": client_cpu,
        "move_ms": {"p50": percentile(move_ms, 50), "p99": percentile(move_ms, 99), "max": max(move_ms)},
        "moves": moves,
        "gap_s": gap,
        "messages_received": sum(len(r) for _, r in results),
        "messages_missing": missing,
        "viewers_reordered": reordered,
        "from_request_sent_ms": {
            "p50": percentile(upper, 50),
            "p99": percentile(upper, 99),
            "max": max(upper, default=None),
        },
        "from_response_ms": {
            "p50": percentile(lower, 50),
            "p99": percentile(lower, 99),
            "max": max(lower, default=None),
        },
    }
