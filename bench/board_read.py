"""2. Board read: the board JSON (and the HTML board page when it exists) at growing sizes.

Query counts are captured in-process (CaptureQueriesContext around Django's test client,
token-authenticated like a real client); times are measured over HTTP against uvicorn.
Snapshots are built once per board version (boards.snapshots), so every timed or counted
request except the "cached" column first bumps the version: it measures a fresh build.

`after_change` is what a board viewer pays after a real change (issue 17): a move committed
by this process (another process, to the server), then the board read over HTTP, against
`GET /healthz` on the same connection in the same repetition; server CPU per request.
"""

import asyncio
import itertools
import time

from django.db import connection
from django.db.models import F
from django.test import Client
from django.test.utils import CaptureQueriesContext

from bench.common import HttpConnection, spread
from bench.fixtures import bulk_tasks, kanban
from boards.admission import task_move
from boards.changes import reconcile_board
from boards.models import Task
from workflows.models import Workflow

# Most tasks wait in the backlog; a tenth is done; the limited columns are full.
DONE_SHARE = 0.1
PER_STEP = 50
AFTER_CHANGE_TASKS = 1000
HEALTHZ_PER_READ = 5  # /healthz costs a fifth as much: as many CPU ticks (10 ms) to count


def build(workspace, size: int):
    workflow, (backlog, _doing, _review, done) = kanban(workspace, f"Board {size}")
    done_count = int(size * DONE_SHARE)
    bulk_tasks(backlog, size - done_count, label="Backlog")
    bulk_tasks(done, done_count, label="Done")
    reconcile_board(workflow_id=workflow.pk)  # fills the limited columns through the pull
    return workflow


def bumper(workflow):
    """A new version with nothing changed, as a change would leave: the next read rebuilds."""
    return lambda: Workflow.objects.filter(pk=workflow.pk).update(version=F("version") + 1)


def mover(workflow, user):
    """A change as `after_change` makes them: one Backlog task to Done or back, each call."""
    backlog, done = workflow.steps.get(name="Backlog"), workflow.steps.get(name="Done")
    task = Task.objects.filter(step=backlog).order_by("position").first()
    targets = itertools.cycle((done, backlog))

    def change():
        nonlocal task
        task = task_move(task=task, to_step=next(targets), actor=user).task

    return change


def _queries(client: Client, path: str, bump, **headers) -> tuple[int, int, int]:
    bump()
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, **headers)
    return response.status_code, len(captured), len(response.content)


async def _times(port: int, path: str, headers: dict, samples: int, bump=None) -> tuple[int, list[float]]:
    conn = HttpConnection(port, headers)
    await conn.open()
    try:
        status, _ = await conn.request("GET", path)  # warm-up: caches, connection
        times = []
        for _ in range(samples):
            if bump is not None:
                await asyncio.to_thread(bump)
            start = time.perf_counter()
            status, _ = await conn.request("GET", path)
            times.append((time.perf_counter() - start) * 1000)
        return status, times
    finally:
        await conn.close()


def run(*, workspace, user, key: str, port: int, sizes, samples: int) -> dict:
    api_client = Client()
    html_client = Client()
    html_client.force_login(user)  # a real session row: uvicorn's workers read it too
    session = html_client.cookies["sessionid"].value
    results = []
    for size in sizes:
        workflow = build(workspace, size)
        bump, token = bumper(workflow), {"Authorization": f"Token {key}"}
        json_path = f"/api/v1/workflows/{workflow.pk}/board/"
        html_path = f"/workflows/{workflow.pk}/"
        status, queries, size_bytes = _queries(api_client, json_path, bump, HTTP_AUTHORIZATION=f"Token {key}")
        assert status == 200, f"board JSON answered {status}"
        _, times = asyncio.run(_times(port, json_path, token, samples, bump))
        _, cached = asyncio.run(_times(port, json_path, token, samples))
        row = {
            "tasks": size,
            "json": {"queries": queries, "bytes": size_bytes, "ms": spread(times), "cached_ms": spread(cached)},
        }
        # What a user sees first of a large board: each column's first PER_STEP tasks.
        paged = f"{json_path}?per_step={PER_STEP}"
        status, queries, size_bytes = _queries(api_client, paged, bump, HTTP_AUTHORIZATION=f"Token {key}")
        if status == 200:
            _, times = asyncio.run(_times(port, paged, token, samples, bump))
            row["per_step"] = {"queries": queries, "bytes": size_bytes, "ms": spread(times)}
        try:
            html_status, html_queries, html_bytes = _queries(html_client, html_path, bump)
        except Exception as exc:  # reported as not run, never as a figure
            html_status, why = None, f"/workflows/<id>/ failed in-process: {exc!r}"[:300]
        if html_status == 200:
            cookie = {"Cookie": f"sessionid={session}"}
            _, html_times = asyncio.run(_times(port, html_path, cookie, samples, bump))
            row["html"] = {"queries": html_queries, "bytes": html_bytes, "ms": spread(html_times)}
        else:
            if html_status is not None:
                why = f"/workflows/<id>/ answered {html_status} (no HTML board in this branch)"
            row["html"] = {"not_run": why}
        results.append(row)
    return {"samples": samples, "per_step": PER_STEP, "sizes": results}


async def _server_cpu_per_request(meter, conn, path: str, samples: int, change=None, headers=None) -> float:
    """Server CPU (ms) per `GET path`; `change` runs (untimed, in this process) before each."""
    before = meter.sample()
    for _ in range(samples):
        if change is not None:
            await asyncio.to_thread(change)
        status, _ = await conn.request("GET", path, headers=headers)
        assert status == 200, f"{path} answered {status}"
    return meter.per_op(before, samples)["server"]


def after_change(*, workspace, user, key: str, server, meter, samples: int, reps: int) -> dict:
    """Per repetition, on one connection: `samples` × 5 back-to-back reads of /healthz; then
    `samples` reads of /healthz and `samples` board reads, each just after a move committed
    here (the same idle gap and the same work elsewhere before it: the no-op request paced
    like the board read); then `samples` back-to-back board reads of one version (cached).
    A move takes one Backlog task to Done or back: one task and two steps per change, the
    board's size unchanged, nothing pulled (In Progress stays full)."""
    workflow = build(workspace, AFTER_CHANGE_TASKS)
    change = mover(workflow, user)
    board_path = f"/api/v1/workflows/{workflow.pk}/board/"

    async def repetition():
        conn, token = HttpConnection(server.port), {"Authorization": f"Token {key}"}
        await conn.open()
        try:
            # Untimed: this worker holds the board and has read it once after a change.
            await conn.request("GET", board_path, headers=token)
            await asyncio.to_thread(change)
            await conn.request("GET", board_path, headers=token)
            cpu = _server_cpu_per_request
            return {
                "healthz": await cpu(meter, conn, "/healthz", samples * HEALTHZ_PER_READ),
                "healthz_after_change": await cpu(meter, conn, "/healthz", samples, change),
                "board_after_change": await cpu(meter, conn, board_path, samples, change, token),
                "board_cached": await cpu(meter, conn, board_path, samples, headers=token),
            }
        finally:
            await conn.close()

    runs = [asyncio.run(repetition()) for _ in range(reps)]
    return {
        "tasks": AFTER_CHANGE_TASKS,
        "samples": samples,
        "healthz_samples": samples * HEALTHZ_PER_READ,
        "repetitions": reps,
        "cpu_ms": {name: spread([run[name] for run in runs]) for name in runs[0]},
        "ratio": spread([run["board_after_change"] / run["healthz"] for run in runs if run["healthz"]]),
        "ratio_paced": spread(
            [run["board_after_change"] / run["healthz_after_change"] for run in runs if run["healthz_after_change"]]
        ),
    }
