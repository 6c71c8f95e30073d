"""Stress kandev and prove its invariants afterwards.

    python -m tests.stress.run --clients 16 --seconds 20 --workers 2 [--kill-workers]

Needs DATABASE_URL (PostgreSQL; a fresh `<name>_stress` database is created and dropped)
and REDIS_URL (the workers' channel layer; a viewer listens to the board's live messages).
N client threads drive 2+ uvicorn workers with a random mix of every board change; then
tests.stress.invariants checks the database, the API, the live messages and the clients'
ledger. With --kill-workers each worker is SIGKILLed once mid-run and restarted.
Exit status 0 when there are no violations.
"""

import argparse
import asyncio
import json
import os
import random
import re
import sys
import threading
import time

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from boards.priorities import Priority
from tests.servers import ServerPool, fresh_database, production_env
from tests.stress.invariants import BoardView, Ledger, check
from tests.stress.seed import seed

TITLES = ["Fix login", "Tâche ✓", "任务 🚀", "Ünïcødé — “quotes”", "RTL \u202eevil", "emoji 👩‍💻"]
PRIORITIES = [p.label for p in Priority]


class Viewer:
    """Listens to the board's channel-layer group, exactly what a WebSocket viewer is sent."""

    def __init__(self, redis_url: str, workflow_id: str):
        self.redis_url, self.group = redis_url, f"board.{workflow_id}"
        self.messages: list[dict] = []
        self.ready = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.task = asyncio.run_coroutine_threadsafe(self._listen(), self.loop)
        if not self.ready.wait(10):
            raise RuntimeError(f"viewer could not subscribe: {self.task.exception(timeout=1)}")

    async def _listen(self) -> None:
        from channels_redis.core import RedisChannelLayer

        # No socket timeout, as the servers' layer (settings.CHANNEL_LAYERS): redis-py's 5 s
        # default cuts off the 5 s blocking read of an idle board and ends this listener.
        host = {"address": self.redis_url, "socket_timeout": None}
        layer = RedisChannelLayer(hosts=[host], capacity=100_000, expiry=300)
        channel = await layer.new_channel()
        await layer.group_add(self.group, channel)
        self.ready.set()
        while True:
            event = await layer.receive(channel)
            self.messages.append(json.loads(event["text"]))

    def wait_for(self, version: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self.task.done():
            if len({m["version"] for m in self.messages}) >= version:
                return
            time.sleep(0.1)

    def failure(self) -> BaseException | None:
        """What ended the listener before close(), if anything: the messages after it were
        never read, which is not the servers losing them."""
        return self.task.exception() if self.task.done() else None

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.task.cancel)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


class SocketViewer:
    """A browser's view over /ws/workflows/<id>/ (token on the handshake): the snapshot, then every message
    in version order (two workers' broadcasts can cross on the way); when its worker dies, or
    a version never arrives, it reconnects and resynchronises from a new snapshot."""

    def __init__(self, base_url: str, workflow_id: str, token: str):
        self.url = f"{base_url.replace('http', 'ws', 1)}/ws/workflows/{workflow_id}/"
        self.headers = {"Authorization": f"Token {token}"}
        self.view = BoardView()
        self.pending: dict[int, dict] = {}
        self.reconnects = self.resyncs = 0
        self.stopping = False
        self.connection = self._connect()
        self.thread = threading.Thread(target=self._listen, daemon=True)
        self.thread.start()

    def _connect(self):
        deadline = time.monotonic() + 30
        while True:
            try:
                connection = connect(self.url, additional_headers=self.headers, open_timeout=10).__enter__()
                first = json.loads(connection.recv(timeout=10))
                assert first["type"] == "board.snapshot", first
                self.view.snapshot(first["version"], first["board"])
                self.pending = {v: m for v, m in self.pending.items() if v > first["version"]}
                self._drain()
                return connection
            except (OSError, ConnectionClosed, TimeoutError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def _listen(self) -> None:
        while not self.stopping:
            try:
                message = json.loads(self.connection.recv())
                self.pending[message["version"]] = message
                self._drain()
            except ConnectionClosed:
                if self.stopping:
                    return
                self.reconnects += 1
                self.connection = self._connect()

    def _drain(self) -> None:
        while self.view.version + 1 in self.pending:
            self.view.apply(self.pending.pop(self.view.version + 1))

    def wait_for(self, version: int, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while self.view.version < version and time.monotonic() < deadline:
            if time.monotonic() > deadline - timeout / 2 and self.resyncs == 0:
                self.resyncs += 1  # a version that never came: refetch, as the board page does
                self.connection.close()
            time.sleep(0.1)

    def close(self) -> None:
        self.stopping = True
        self.connection.close()
        self.thread.join(timeout=5)


class Board:
    """The clients' shared, approximate picture: ids to aim at (the server decides)."""

    def __init__(self, api: httpx.Client, workspace_id: str):
        self.lock = threading.Lock()
        self.workflow = api.post("/api/v1/workflows/", json={"workspace_id": workspace_id, "name": "Stress"}).json()
        self.tasks: list[str] = []
        self.temp_steps: list[str] = []
        self.serial = 0

    def build(self, api: httpx.Client) -> None:
        def step(name, **fields):
            body = {"workflow_id": self.workflow["id"], "name": name, **fields}
            response = api.post("/api/v1/steps/", json=body)
            response.raise_for_status()
            return response.json()["id"]

        self.backlog = step("Backlog", is_start_step=True)
        self.ready = step("Ready", wip_limit=3, on_full="queue", pull_from_step_id=self.backlog)
        self.doing = step("Doing", wip_limit=2, pull_from_step_id=self.ready)
        self.review = step("Review", wip_limit=2, pull_from_step_id=self.doing)
        self.done = step("Done")
        self.fixed = [self.backlog, self.ready, self.doing, self.review, self.done]

    def steps(self) -> list[str]:
        with self.lock:
            return self.fixed + self.temp_steps

    def some_tasks(self, k: int = 1) -> list[str]:
        with self.lock:
            return random.sample(self.tasks, min(k, len(self.tasks))) if self.tasks else []

    def next_serial(self) -> int:
        with self.lock:
            self.serial += 1
            return self.serial


class Client(threading.Thread):
    def __init__(self, base_url, token, *, owner, board, ledger, deadline, tolerate_drops):
        super().__init__(daemon=True)
        self.api = httpx.Client(base_url=base_url, headers={"Authorization": f"Token {token}"}, timeout=60)
        self.owner, self.board, self.ledger = owner, board, ledger
        self.deadline, self.tolerate_drops = deadline, tolerate_drops
        self.error: BaseException | None = None
        ops = {
            "create_start": 10,
            "create_explicit": 10,
            "move": 20,
            "reorder": 6,
            "bulk_move": 6,
            "archive": 5,
            "restore": 5,
            "delete": 2,
            "limit": 3,
            "feeder": 2,
            "step_create": 1,
            "step_delete": 1,
            "edit": 3,
            "read": 4,
            "force": 3 if owner else 0,
        }
        self.ops, self.weights = list(ops), list(ops.values())

    def run(self) -> None:
        try:
            while time.monotonic() < self.deadline:
                op = random.choices(self.ops, self.weights)[0]
                getattr(self, f"op_{op}")()
        except BaseException as exc:  # reported by the driver
            self.error = exc
        finally:
            self.api.close()

    def call(self, op: str, method: str, url: str, **kwargs):
        try:
            response = self.api.request(method, url, **kwargs)
        except httpx.TransportError:
            if not self.tolerate_drops:
                raise
            with self.board.lock:
                self.ledger.dropped += 1
            return None
        with self.board.lock:
            self.ledger.check_response(op, response)
        return response

    def title(self) -> str:
        return f"{random.choice(TITLES)} #{self.board.next_serial()}"

    def created(self, response) -> None:
        if response is not None and response.status_code in (201, 202):
            with self.board.lock:
                self.ledger.created.add(response.json()["id"])
                self.board.tasks.append(response.json()["id"])

    def op_create_start(self):
        body = {"workflow_id": self.board.workflow["id"], "title": self.title()}
        self.created(self.call("create_start", "POST", "/api/v1/tasks/", json=body))

    def op_create_explicit(self):
        body = {
            "step_id": random.choice(self.board.steps()),
            "title": self.title(),
            "priority": random.choice(PRIORITIES),
        }
        if random.random() < 0.3:
            body["position"] = random.choice([0, 1, 5, 1000])
        self.created(self.call("create_explicit", "POST", "/api/v1/tasks/", json=body))

    def op_move(self):
        for task in self.board.some_tasks():
            body = {"step_id": random.choice(self.board.steps())}
            if random.random() < 0.3:
                body["position"] = random.randint(0, 6)
            self.call("move", "POST", f"/api/v1/tasks/{task}/move/", json=body)

    def op_reorder(self):
        for task in self.board.some_tasks():
            current = self.call("read", "GET", f"/api/v1/tasks/{task}/")
            if current is not None and current.status_code == 200:
                body = {"step_id": current.json()["step_id"], "position": random.randint(0, 4)}
                self.call("reorder", "POST", f"/api/v1/tasks/{task}/move/", json=body)

    def op_bulk_move(self):
        tasks = self.board.some_tasks(random.randint(2, 4))
        if tasks:
            body = {"task_ids": tasks, "step_id": random.choice(self.board.steps())}
            self.call("bulk_move", "POST", "/api/v1/tasks/bulk-move/", json=body)

    def op_archive(self):
        for task in self.board.some_tasks():
            self.call("archive", "POST", f"/api/v1/tasks/{task}/archive/")

    def op_restore(self):
        for task in self.board.some_tasks():
            self.call("restore", "POST", f"/api/v1/tasks/{task}/restore/", json={})

    def op_delete(self):
        for task in self.board.some_tasks():
            response = self.call("delete", "DELETE", f"/api/v1/tasks/{task}/")
            if response is not None and response.status_code == 204:
                with self.board.lock:
                    if task in self.board.tasks:
                        self.board.tasks.remove(task)

    def op_limit(self):
        with self.board.lock:
            self.ledger.limit_changed.add(self.board.review)
        body = {"wip_limit": random.randint(1, 4)}
        self.call("limit", "PATCH", f"/api/v1/steps/{self.board.review}/", json=body)

    def op_feeder(self):
        feeder = random.choice([self.board.doing, self.board.ready, None])
        body = {"pull_from_step_id": feeder}
        self.call("feeder", "PATCH", f"/api/v1/steps/{self.board.review}/", json=body)

    def op_step_create(self):
        body = {
            "workflow_id": self.board.workflow["id"],
            "position": random.randint(0, 6),
            "name": f"Temp {self.board.next_serial()}",
        }
        response = self.call("step_create", "POST", "/api/v1/steps/", json=body)
        if response is not None and response.status_code == 201:
            with self.board.lock:
                self.board.temp_steps.append(response.json()["id"])

    def op_step_delete(self):
        with self.board.lock:
            if not self.board.temp_steps:
                return
            step = self.board.temp_steps.pop(random.randrange(len(self.board.temp_steps)))
        target = random.choice(self.board.fixed)
        self.call("step_delete", "DELETE", f"/api/v1/steps/{step}/?move_tasks_to={target}")

    def op_edit(self):
        for task in self.board.some_tasks():
            self.call("edit", "PATCH", f"/api/v1/tasks/{task}/", json={"title": self.title()})

    def op_read(self):
        self.call("read", "GET", f"/api/v1/workflows/{self.board.workflow['id']}/board/")

    def op_force(self):
        for task in self.board.some_tasks():
            body = {"step_id": self.board.doing, "force": True, "reason": "stress: expedite"}
            self.call("force", "POST", f"/api/v1/tasks/{task}/move/", json=body)


TRACEBACK = "Traceback (most recent call last):"
# The start of a log record after an exception: uvicorn's ("INFO:     ...") or Django's request
# log ("Conflict: /api/..."), so a traceback ends there, not with the whole log after it.
LOG_RECORD = re.compile(r"[A-Z]+: {2,}|[A-Z][A-Za-z ]*: /")
CHAINED = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


def logged_tracebacks(logs: str) -> list[str]:
    """Each traceback in the servers' logs, whole: the log line before it (Django's
    "Internal Server Error: <path>"), every exception of its chain, each to its last line."""
    lines = logs.splitlines()
    found = []
    i = 0
    while i < len(lines):
        if lines[i] != TRACEBACK:
            i += 1
            continue
        start = i - 1 if i > 0 and lines[i - 1] else i
        while True:
            i += 1
            while i < len(lines) and lines[i].startswith(" "):  # its frames
                i += 1
            if i < len(lines) and lines[i] != TRACEBACK:  # the exception's line
                i += 1
            while i < len(lines) and lines[i] and lines[i] != TRACEBACK and not LOG_RECORD.match(lines[i]):
                i += 1  # the rest of its message, up to the next log record
            following = [line for line in lines[i : i + 4] if line]
            if following[:2] not in ([CHAINED[0], TRACEBACK], [CHAINED[1], TRACEBACK]):
                break
            i = lines.index(TRACEBACK, i)
        found.append("\n".join(lines[start:i]))
    return found


def run(*, clients: int = 16, seconds: float = 20, workers: int = 2, kill_workers: bool = False, log=print) -> dict:
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        raise RuntimeError("The stress run needs REDIS_URL (its viewer uses the channel layer).")
    with fresh_database("stress") as url:
        people = seed(url)
        with ServerPool(production_env(url, REDIS_URL=redis_url), workers=workers) as pool:
            tokens = people["tokens"]
            owner_api = httpx.Client(
                base_url=pool.base_url, timeout=60, headers={"Authorization": f"Token {tokens['owner']}"}
            )
            board = Board(owner_api, people["workspace_id"])
            viewer = Viewer(redis_url, board.workflow["id"])
            socket = SocketViewer(pool.base_url, board.workflow["id"], tokens["viewer"])
            try:
                board.build(owner_api)
                fixed = {board.ready: 3, board.doing: 2}
                ledger = Ledger(workflow_id=board.workflow["id"], fixed_limit_steps=fixed)
                deadline = time.monotonic() + seconds
                threads = [
                    Client(
                        pool.base_url,
                        tokens["owner" if i % 2 == 0 else "member"],
                        owner=i % 2 == 0,
                        board=board,
                        ledger=ledger,
                        deadline=deadline,
                        tolerate_drops=kill_workers,
                    )
                    for i in range(clients)
                ]
                started = time.monotonic()
                for thread in threads:
                    thread.start()
                kills = 0
                if kill_workers:
                    for i in range(workers):
                        time.sleep(seconds / (workers + 1))
                        pool.kill(i)
                        kills += 1
                        log(f"SIGKILLed worker {i}; restarting it")
                        pool.restart(i)
                for thread in threads:
                    thread.join()
                elapsed = time.monotonic() - started
                errors = [t.error for t in threads if t.error is not None]
                if errors:
                    raise RuntimeError(f"{len(errors)} client(s) failed") from errors[0]
                api_board = owner_api.get(f"/api/v1/workflows/{board.workflow['id']}/board/").json()
                viewer.wait_for(api_board["workflow"]["version"])
                socket.wait_for(api_board["workflow"]["version"])
                if viewer.failure() is not None:
                    ledger.violations.append(f"the channel-layer viewer stopped listening: {viewer.failure()!r}")
            finally:
                viewer.close()
                socket.close()
                owner_api.close()
            figures = check(
                url,
                ledger,
                api_board=api_board,
                messages=list(viewer.messages),
                socket_view=socket.view,
                lost_messages_allowed=kills,
            )
            figures["websocket_reconnects"] = socket.reconnects
            figures["websocket_resyncs"] = socket.resyncs
            if socket.resyncs and not figures["live_messages_lost"]:
                ledger.violations.append("the WebSocket viewer missed a message nobody lost")
            dead = pool.dead()
            if dead:
                ledger.violations.append(f"workers {dead} died during the run")
            logs = pool.logs_text()
            if any(key in logs for key in tokens.values()):
                ledger.violations.append("an API key appears in the worker logs")
            outages = {ln for ln in logs.splitlines() if "database unavailable" in ln}
            for line in sorted(outages)[:5]:
                log(line)
            tracebacks = logged_tracebacks(logs)
            # With workers SIGKILLed under connected viewers, the survivors log the cancelled
            # channel-layer reads of dropped sockets: counted, not violations, in that mode.
            cancelled = [t for t in tracebacks if "redis/asyncio" in t]
            errors = [t for t in tracebacks if t not in cancelled] if kill_workers else tracebacks
            server_errors = len(tracebacks)
            if errors:
                ledger.violations.append(f"{len(errors)} tracebacks in the worker logs, first:")
                ledger.violations.append(errors[0][-6000:])
    requests = sum(ledger.operations.values())
    return {
        "clients": clients,
        "workers": workers,
        "seconds": round(elapsed, 1),
        "requests": requests,
        "requests_per_second": round(requests / elapsed, 1),
        "operations": dict(ledger.operations),
        "statuses": dict(sorted(ledger.statuses.items())),
        "dropped_by_killed_workers": ledger.dropped,
        "workers_killed": kills,
        **figures,
        "server_tracebacks": server_errors,
        "cancelled_channel_reads": len(cancelled),
        "violations": ledger.violations,
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--kill-workers", action="store_true")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the operation mix")
    args = parser.parse_args(argv)
    if args.seed is not None:
        random.seed(args.seed)
    report = run(
        clients=args.clients,
        seconds=args.seconds,
        workers=args.workers,
        kill_workers=args.kill_workers,
        log=lambda m: print(m, file=sys.stderr),
    )
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 1 if report["violations"] else 0


if __name__ == "__main__":
    sys.exit(main())
