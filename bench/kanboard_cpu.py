"""CPU per create and per move, kandev (this tree) beside Kanboard, interleaved in one sitting.

`python bench/kanboard_cpu.py KANBOARD_DIR [--rounds 6] [--seconds 3] [--clients 16]` from this
tree, with DATABASE_URL and REDIS_URL set. KANBOARD_DIR is a Kanboard source tree with its
vendor/ folder (a release, or `git archive` of kanboard/kanboard); this bench writes its
config.php. Needs PHP 8 with pdo_pgsql and OPcache (Debian: php-cli php-pgsql php-mbstring
php-xml php-gd).

The same work on both, each client on a board of its own: a create puts a task at the end of
an empty column; a move takes a random task of two 1,000-task columns to the end of the other.
kandev runs `uvicorn --workers 2` (tests.servers.Server) against a database made by this tree's
code; Kanboard runs PHP's server with two workers (PHP_CLI_SERVER_WORKERS=2, OPcache on, its
files never re-checked) against a database of its own (`--database`: PostgreSQL, or SQLite,
Kanboard's default, with one worker, as SQLite takes one writer at a time), through its JSON-RPC API (createTask,
moveTaskPosition) with the application's token. CPU per request from /proc: the server's
processes, PostgreSQL and Redis. Kanboard opens a PostgreSQL session per request, and a
backend that ends between two samples is gone from /proc: its CPU is read from the
postmaster's children totals (cutime + cstime), and so are kandev's, for the same count.
"""

import argparse
import asyncio
import base64
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.request import urlopen

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.run import fresh_database, prepare, warm_up  # noqa: E402
from bench.write_cpu import in_tree, median_text, report_stretch  # noqa: E402

KANBOARD_PORT = 8090
CONFIG = {
    "postgres": """<?php
define('DB_DRIVER', 'postgres');
define('DB_USERNAME', {user!r});
define('DB_PASSWORD', '');
define('DB_HOSTNAME', {host!r});
define('DB_PORT', {port});
define('DB_NAME', {name!r});
""",
    "sqlite": """<?php
define('DB_DRIVER', 'sqlite');
define('DB_FILENAME', {path!r});
""",
}


def reaped_seconds() -> float:
    """CPU of the PostgreSQL backends that have ended: the postmaster's children totals."""
    from bench.common import _processes

    procs = _processes()
    postmaster = next(
        pid
        for pid, (ppid, name, _) in procs.items()
        if name == "postgres" and procs.get(ppid, (0, ""))[1] != "postgres"
    )
    with open(f"/proc/{postmaster}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


class Meter:
    """bench.common.CpuMeter, plus the backends that ended meanwhile."""

    def __init__(self, server_pid: int, database: str):
        from bench.common import CpuMeter

        self.inner = CpuMeter(server_pid, database)

    def sample(self) -> dict:
        parts = self.inner.sample()
        parts["postgres"]["ended"] = reaped_seconds()
        return parts

    def per_op(self, before: dict, ops: int) -> dict:
        from bench.common import cpu_ms_per_op

        return cpu_ms_per_op(before, self.sample(), ops)


class Kanboard:
    """Kanboard on PHP's server, on a fresh database; its projects made through its API."""

    def __init__(self, directory: str, database: str, dsn: str):
        from psycopg.conninfo import conninfo_to_dict

        self.directory, self.database, self.dsn = directory, database, dsn
        self.path = str(Path(directory, "data", "bench.sqlite"))
        Path(self.path).unlink(missing_ok=True)
        info = conninfo_to_dict(dsn)
        Path(directory, "config.php").write_text(
            CONFIG[database].format(
                user=info.get("user", "postgres"),
                host=info.get("host", "127.0.0.1"),
                port=int(info.get("port", 5432)),
                name=info["dbname"],
                path=self.path,
            )
        )
        self.process = None
        self.headers = {}

    def connect(self):
        """A DB-API connection to Kanboard's database, and its parameter mark."""
        if self.database == "sqlite":
            import sqlite3

            return sqlite3.connect(self.path, timeout=30), "?"
        import psycopg

        return psycopg.connect(self.dsn), "%s"

    def start(self):
        command = ["php", "-d", "opcache.enable_cli=1", "-d", "opcache.validate_timestamps=0"]
        command += ["-S", f"127.0.0.1:{KANBOARD_PORT}", "-t", self.directory]
        # SQLite takes one writer at a time: two workers would refuse each other's writes.
        env = dict(os.environ, PHP_CLI_SERVER_WORKERS="1" if self.database == "sqlite" else "2")
        env.pop("DATABASE_URL")  # Kanboard would take kandev's database from it, over config.php
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        deadline = time.monotonic() + 60
        while True:  # the first request runs Kanboard's migrations
            try:
                urlopen(f"http://127.0.0.1:{KANBOARD_PORT}/", timeout=30).read()  # the login page
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        db, mark = self.connect()
        with db:
            (token,) = db.execute(f"SELECT value FROM settings WHERE option = {mark}", ("api_token",)).fetchone()
        db.close()
        credentials = base64.b64encode(f"jsonrpc:{token}".encode()).decode()
        self.headers = {"Authorization": f"Basic {credentials}"}

    def call(self, method: str, params):
        from urllib.request import Request

        body = orjson.dumps({"jsonrpc": "2.0", "method": method, "id": 1, "params": params})
        request = Request(f"http://127.0.0.1:{KANBOARD_PORT}/jsonrpc.php", body, self.headers)
        answer = orjson.loads(urlopen(request, timeout=60).read())
        if answer.get("result") in (None, False):
            raise RuntimeError(f"{method}: {answer}")
        return answer["result"]

    def boards(self, clients: int, column: int) -> dict:
        """As bench/write_cpu.py's: {create: [(project, [columns], [], counts)], move: [...]},
        each move project's first column filled with `column` tasks."""
        made = {"create": [], "move": []}
        for kind in made:
            for i in range(clients):
                project = self.call("createProject", {"name": f"CPU {kind} {i}"})
                columns = [c["id"] for c in self.call("getColumns", [project])][:2]
                (swimlane,) = [s["id"] for s in self.call("getActiveSwimlanes", [project])]
                made[kind].append(SimpleNamespace(project=project, columns=columns, swimlane=swimlane, tasks=[]))
        now = int(time.time())
        db, mark = self.connect()
        with db:
            for board in made["move"]:
                rows = [
                    ("CPU", board.project, board.columns[0], board.swimlane, n, now, now, now, "yellow")
                    for n in range(1, column + 1)
                ]
                db.cursor().executemany(
                    "INSERT INTO tasks (title, project_id, column_id, swimlane_id, position, date_creation,"
                    f" date_modification, date_moved, color_id) VALUES ({', '.join([mark] * 9)})",
                    rows,
                )
                query = f"SELECT id FROM tasks WHERE project_id = {mark} ORDER BY position"
                board.tasks = [row[0] for row in db.execute(query, (board.project,)).fetchall()]
                board.where = dict.fromkeys(board.tasks, board.columns[0])
                board.count = {board.columns[0]: column, board.columns[1]: 0}
        db.close()
        return made

    def writes(self, clients: int, duration: float, kind: str, boards: list, seed: int):
        from bench.common import timed_http_clients

        def make(conn, i):
            rng = random.Random(seed * 1000 + i)
            board = boards[i]

            async def op():
                if kind == "create":
                    params = {"title": f"cpu {i}", "project_id": board.project, "column_id": board.columns[0]}
                    status, body = await conn.request("POST", "/jsonrpc.php", rpc("createTask", params))
                else:
                    task = rng.choice(board.tasks)
                    source = board.where[task]
                    target = board.columns[1] if source == board.columns[0] else board.columns[0]
                    params = {
                        "project_id": board.project,
                        "task_id": task,
                        "column_id": target,
                        "position": board.count[target] + 1,  # the end, as kandev's move
                        "swimlane_id": board.swimlane,
                    }
                    status, body = await conn.request("POST", "/jsonrpc.php", rpc("moveTaskPosition", params))
                    board.where[task] = target
                    board.count[source] -= 1
                    board.count[target] += 1
                ok = status == 200 and orjson.loads(body).get("result") not in (None, False)
                return "ok" if ok else f"error {status} {body[:80]!r}"

            return op

        return asyncio.run(timed_http_clients(KANBOARD_PORT, self.headers, clients, duration, make))

    def stop(self):
        if self.process:  # its workers too: they outlive the parent
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=10)


def rpc(method: str, params) -> dict:
    return {"jsonrpc": "2.0", "method": method, "id": 1, "params": params}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kanboard")
    parser.add_argument("--database", choices=["postgres", "sqlite"], default="postgres", help="Kanboard's")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, default=16)
    args = parser.parse_args()

    dsn, _ = prepare()
    from django.core.management import call_command

    from bench import request_cpu
    from tests.servers import Server

    call_command("collectstatic", interactive=False, verbosity=0)
    kandev_dsn = fresh_database(f"{dsn}_kandev")
    filled = in_tree(str(ROOT), kandev_dsn, args.clients, request_cpu.COLUMN)
    kandev_boards = {
        kind: [(workflow, [SimpleNamespace(pk=pk) for pk in steps], ids, {}) for workflow, steps, ids in listed]
        for kind, listed in filled["boards"].items()
    }
    kanboard_dsn = fresh_database(f"{dsn}_kanboard")
    kanboard = Kanboard(args.kanboard, args.database, kanboard_dsn)
    kandev = Server(dict(os.environ, DATABASE_URL=kandev_dsn), workers=2)
    figures = {name: {kind: [] for kind in ("create", "move")} for name in ("kanboard", "kandev")}
    failed = {name: 0 for name in figures}
    try:
        kandev.start(timeout=300)
        asyncio.run(warm_up(kandev.port, filled["key"], filled["warm"]))
        kanboard.start()
        kanboard_boards = kanboard.boards(args.clients, request_cpu.COLUMN)
        key = filled["key"]
        for kind in ("create", "move"):  # both warm: caches, pools, OPcache
            request_cpu.writes(kandev.port, key, args.clients, 1.0, kind, kandev_boards[kind], 99)
            kanboard.writes(args.clients, 1.0, kind, kanboard_boards[kind], 99)
        meters = {
            "kandev": Meter(kandev.process.pid, kandev_dsn.rsplit("/", 1)[1]),
            "kanboard": Meter(kanboard.process.pid, kanboard_dsn.rsplit("/", 1)[1]),
        }
        for round_ in range(args.rounds):
            for name in ("kanboard", "kandev") if round_ % 2 == 0 else ("kandev", "kanboard"):
                for kind in ("create", "move"):
                    before = meters[name].sample()
                    if name == "kandev":
                        lat, _, outcomes = request_cpu.writes(
                            kandev.port, key, args.clients, args.seconds, kind, kandev_boards[kind], round_
                        )
                    else:
                        lat, _, outcomes = kanboard.writes(
                            args.clients, args.seconds, kind, kanboard_boards[kind], round_
                        )
                    cpu = meters[name].per_op(before, len(lat))
                    figures[name][kind].append(cpu)
                    failed[name] += report_stretch(round_, name, kind, len(lat), cpu, outcomes)
    finally:
        kandev.stop()
        kanboard.stop()

    print("\nmedians, ms of CPU per request (total: server + PostgreSQL + Redis):")
    for kind in ("create", "move"):
        (theirs, their_text), (ours, our_text) = (median_text(name, figures[name][kind]) for name in figures)
        print(f"{kind:6} {their_text} | {our_text} | kandev / Kanboard {ours / theirs:.2f}")
        for name in figures:
            print(f"    {name} by round: " + ", ".join(f"{f['total']:.2f}" for f in figures[name][kind]))
    for name, count in failed.items():
        if count:
            print(f"{name}: {count} requests failed; its figures are not comparable")
    print(f"kandev: {filled['statements']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
