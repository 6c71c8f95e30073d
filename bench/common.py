"""Shared pieces of the benchmark suite: statistics, CPU accounting, a lean HTTP client.
The server under test is tests.servers.Server, the one the tests start."""

import asyncio
import os
import socket
import statistics
import threading
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent


# --- statistics -----------------------------------------------------------------------


def percentile(values, q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def spread(values) -> dict:
    """Median with min and max: how every figure of the suite is reported."""
    values = [v for v in values if v is not None]
    if not values:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "n": len(values),
    }


def run_summary(latencies_s, elapsed_s: float, **extra) -> dict:
    """One repetition of a load: rate over the wall time, latency percentiles in ms."""
    ms = [v * 1000 for v in latencies_s]
    return {
        "ops": len(ms),
        "rate": len(ms) / elapsed_s if elapsed_s else 0.0,
        "p50_ms": percentile(ms, 50),
        "p99_ms": percentile(ms, 99),
        **extra,
    }


def combine(runs: list[dict], keys=("rate", "p50_ms", "p99_ms")) -> dict:
    return {key: spread([r[key] for r in runs]) for key in keys} | {"runs": runs}


def connect_patiently(connect, attempts: int = 20):
    """The PostgreSQL server is shared (max_connections): wait for a free slot, untimed."""
    for attempt in range(attempts):
        try:
            return connect()
        except Exception as exc:
            if "too many clients" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.25)


# --- CPU accounting (Linux /proc) --------------------------------------------------------


def _stat(pid) -> tuple[int, str, float]:
    """(parent pid, name, user+system CPU seconds) of one process, from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    name = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[1]), name, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _processes() -> dict:
    """{pid: `_stat(pid)`} of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            found[int(entry)] = _stat(entry)
        except OSError:  # gone meanwhile
            continue
    return found


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU used so far by one process."""
    return _stat(pid)[2]


def _serves_database(pid: int, database: str) -> bool:
    """A PostgreSQL backend's title names its database: `postgres: <cluster>: <user> <db> <client> ...`."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            title = f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return f" {database} " in title


CPU_PARTS = ("server", "postgres", "redis")


def cpu_seconds(server_pid: int, database: str, exclude: tuple = ()) -> dict:
    """CPU used so far, per process, by the server (its process and every descendant: the
    workers), by the PostgreSQL backends of `database` (other sessions' databases share the
    cluster; its shared background processes are not counted) and by Redis (shared with other
    sessions' databases: an upper bound). `exclude`: pids not to count (the suite's own backend)."""
    procs = _processes()
    tree, grew = {server_pid}, True
    while grew:
        grew = False
        for pid, (ppid, _, _) in procs.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                grew = True
    parts = {part: {} for part in CPU_PARTS}
    for pid, (_, name, cpu) in procs.items():
        if pid in exclude:
            continue
        if pid in tree:
            parts["server"][pid] = cpu
        elif name == "postgres" and _serves_database(pid, database):
            parts["postgres"][pid] = cpu
        elif name == "redis-server":
            parts["redis"][pid] = cpu
    return parts


def cpu_ms_per_op(before: dict, after: dict, ops: int) -> dict:
    """ms of CPU per operation by part, and their total. Per process, so a backend that
    started meanwhile counts whole and one that ended is not counted as a negative."""
    if not ops:
        return {part: None for part in (*CPU_PARTS, "total")}
    ms = {
        part: sum(cpu - before[part].get(pid, 0.0) for pid, cpu in after[part].items()) * 1000 / ops
        for part in CPU_PARTS
    }
    return ms | {"total": sum(ms.values())}


class CpuMeter:
    """The server, database and Redis of one run: `before = meter.sample()`, then after the
    stretch `meter.per_op(before, ops)`."""

    def __init__(self, server_pid: int, database: str, exclude: tuple = ()):
        self.server_pid, self.database, self.exclude = server_pid, database, exclude

    def sample(self) -> dict:
        return cpu_seconds(self.server_pid, self.database, self.exclude)

    def per_op(self, before: dict, ops: int) -> dict:
        return cpu_ms_per_op(before, self.sample(), ops)


def cpu_spread(runs: list[dict]) -> dict:
    """{part: spread} over the runs' CPU-per-operation dicts."""
    return {part: spread([r[part] for r in runs]) for part in (*CPU_PARTS, "total")}


# --- threads behind a barrier -----------------------------------------------------------


def timed_threads(n: int, duration: float, make_worker) -> tuple[list[float], float, list]:
    """Run `n` workers together for `duration` seconds.

    `make_worker(i)` returns `(setup, op, teardown)`; `op()` is timed in a loop until the
    deadline. Returns all latencies, the wall time from release to the last finish, and
    the errors raised.
    """
    state = {}
    # The action runs once, as the last party arrives: the clock starts after every setup.
    barrier = threading.Barrier(
        n + 1,
        action=lambda: state.update(started=time.perf_counter(), deadline=time.perf_counter() + duration),
    )
    latencies: list[list[float]] = [[] for _ in range(n)]
    errors: list = []

    def body(i):
        setup, op, teardown = make_worker(i)
        try:
            setup()
            barrier.wait()
            deadline = state["deadline"]
            mine = latencies[i]
            while True:
                start = time.perf_counter()
                if start >= deadline:
                    break
                op()
                mine.append(time.perf_counter() - start)
        except Exception as exc:  # reported with the figures, never hidden
            errors.append(repr(exc))
            if barrier.n_waiting and not barrier.broken:
                barrier.abort()
        finally:
            teardown()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    try:
        barrier.wait(timeout=120)
    except threading.BrokenBarrierError:
        pass
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - state.get("started", time.perf_counter())
    return [v for per in latencies for v in per], elapsed, errors


# --- a lean HTTP/1.1 keep-alive client ----------------------------------------------------


class HttpConnection:
    """One keep-alive connection. Deliberately small: the client should cost the server's
    CPU as little as possible on a 2-core machine (httpx costs several times more)."""

    def __init__(self, port: int, headers: dict | None = None):
        self.port = port
        self.extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        self.reader = self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=2**20)
        self.writer.transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    async def request(self, method: str, path: str, body=None, headers: dict | None = None):
        if self.writer is None:
            await self.open()
        data = orjson.dumps(body) if body is not None else b""
        extra = self.extra + "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}"
            + ("Content-Type: application/json\r\n" if body is not None else "")
            + f"Content-Length: {len(data)}\r\n\r\n"
        )
        self.writer.write(head.encode() + data)
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                fields[name.strip().lower()] = value.strip()
        if "content-length" in fields:
            payload = await self.reader.readexactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            payload = await self._chunked()
        elif fields.get("connection", "").lower() == "close":  # the body ends with the connection
            payload = await self.reader.read()
        else:
            payload = b""
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return status, payload

    async def _chunked(self) -> bytes:
        parts = []
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                return b"".join(parts)
            parts.append(await self.reader.readexactly(size))
            await self.reader.readexactly(2)

    async def close(self):
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
            self.reader = self.writer = None


async def timed_clients(n: int, duration: float, make_client) -> tuple[list[float], float, dict]:
    """Run `n` async clients for `duration` seconds; `make_client(i)` returns an async
    callable doing one request and returning a label ("ok", "conflict", "error: ...")."""
    latencies: list[float] = []
    outcomes: dict = {}
    ops = [make_client(i) for i in range(n)]
    started = time.perf_counter()
    deadline = started + duration

    async def loop(op):
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            label = await op()
            latencies.append(time.perf_counter() - start)
            outcomes[label] = outcomes.get(label, 0) + 1

    await asyncio.gather(*(loop(op) for op in ops))
    return latencies, time.perf_counter() - started, outcomes


async def timed_http_clients(port: int, headers: dict, n: int, duration: float, make_client):
    """`timed_clients` over `n` keep-alive connections; `make_client(conn, i)` returns the
    client's one-request callable."""
    conns = [HttpConnection(port, headers) for _ in range(n)]
    for conn in conns:
        await conn.open()
    try:
        return await timed_clients(n, duration, lambda i: make_client(conns[i], i))
    finally:
        for conn in conns:
            await conn.close()


def healthz_ceiling(port: int, meter: CpuMeter, clients: int, duration: float) -> dict:
    """`GET /healthz` (no database, no DRF) with `clients` keep-alive clients: what the server
    stack itself (the server, Django's ASGI handler, the middleware) answers per second and
    costs per request on this machine, the floor every request figure is divided by."""

    def make(conn, i):
        async def op():
            status, _ = await conn.request("GET", "/healthz")
            return "ok" if status == 200 else f"error {status}"

        return op

    before = meter.sample()
    lat, elapsed, _ = asyncio.run(timed_http_clients(port, {}, clients, duration, make))
    return {"rate": len(lat) / elapsed, "cpu_ms": meter.per_op(before, len(lat))}
