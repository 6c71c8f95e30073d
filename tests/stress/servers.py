"""Real parts for the stress and fault runs: a fresh PostgreSQL database, kandev server
workers as subprocesses on one shared socket, and a TCP proxy that can cut the database off.
"""

import json
import os
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import httpx
import psycopg
from psycopg import sql

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise RuntimeError("The stress and fault runs need DATABASE_URL pointing at PostgreSQL.")
    return url


def _with_db(url: str, name: str, port: int | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if port is not None:
        user = netloc.rsplit("@", 1)[0] + "@" if "@" in netloc else ""
        netloc = f"{user}127.0.0.1:{port}"
    return urlunsplit((parts.scheme, netloc, f"/{name}", parts.query, parts.fragment))


def via_port(url: str, port: int) -> str:
    """The same database, reached through 127.0.0.1:`port` (the proxy)."""
    return _with_db(url, urlsplit(url).path.lstrip("/"), port)


@contextmanager
def fresh_database(suffix: str):
    """A new, migrated database beside DATABASE_URL's (`<name>_<suffix>`), dropped afterwards."""
    base = database_url()
    name = f"{urlsplit(base).path.lstrip('/') or 'postgres'}_{suffix}"
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    admin = psycopg.connect(base, autocommit=True)
    try:
        admin.execute(drop)
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        url = _with_db(base, name)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
            cwd=ROOT, env=server_env(url), check=True,
        )
        yield url
    finally:
        admin.execute(drop)
        admin.close()


def seed(url: str) -> dict:
    """Users for every role with their API tokens, and the workspace (tests.stress.seed)."""
    out = subprocess.run(
        [sys.executable, "-m", "tests.stress.seed"],
        cwd=ROOT, env=server_env(url), check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def server_env(url: str, **extra) -> dict:
    env = {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "0",
        "SECRET_KEY": "stress-" + secrets.token_hex(16),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "DATABASE_CONNECT_TIMEOUT": "2",
        "DATABASE_POOL_MAX_SIZE": "6",  # per worker, as in production (README)
        "PYTHONUNBUFFERED": "1",
    }
    env.update({k: str(v) for k, v in extra.items()})
    return env


class ServerPool:
    """`workers` kandev processes accepting on one listening socket (127.0.0.1, random port)."""

    def __init__(self, url: str, workers: int = 2, **env):
        self.env = server_env(url, **env)
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.sock.set_inheritable(True)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.logs = tempfile.TemporaryDirectory(prefix="kandev-stress-")
        self.procs: list[subprocess.Popen | None] = [None] * workers
        for i in range(workers):
            self.start(i)
        self.wait_ready()

    def start(self, i: int) -> None:
        log = open(Path(self.logs.name) / f"worker{i}.log", "ab")  # noqa: SIM115 (lives with the process)
        self.procs[i] = subprocess.Popen(
            [sys.executable, "-m", "tests.stress.serve", str(self.sock.fileno())],
            cwd=ROOT, env=self.env, pass_fds=[self.sock.fileno()], stdout=log, stderr=log,
        )
        log.close()

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for i, proc in enumerate(self.procs):
                if proc is not None and proc.poll() is not None:
                    raise RuntimeError(f"worker {i} exited with {proc.returncode}:\n{self.log(i)}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError("kandev workers did not become ready")

    def kill(self, i: int) -> None:
        """SIGKILL: no clean-up, whatever the worker was doing."""
        proc = self.procs[i]
        proc.send_signal(signal.SIGKILL)
        proc.wait()

    def restart(self, i: int) -> None:
        self.start(i)
        self.wait_ready()

    def log(self, i: int) -> str:
        return (Path(self.logs.name) / f"worker{i}.log").read_text(errors="replace")

    def logs_text(self) -> str:
        return "\n".join(self.log(i) for i in range(len(self.procs)))

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            if proc is not None:
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        self.logs.cleanup()


class TcpProxy:
    """Forwards 127.0.0.1:<port> to `target`. `cut()` drops every open connection and
    refuses new ones (what clients see while PostgreSQL restarts); `cut(hang=True)` instead
    leaves new connections unanswered (a partitioned network); `restore()` ends either."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.cut_off = False
        self.hang = False
        self.held: list[socket.socket] = []
        self.pairs: set[tuple[socket.socket, socket.socket]] = set()
        self.lock = threading.Lock()
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.cut_off:
                if self.hang:
                    self.held.append(client)
                else:
                    client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            pair = (client, upstream)
            with self.lock:
                self.pairs.add(pair)
            threading.Thread(target=self._pump, args=(pair,), daemon=True).start()

    def _pump(self, pair) -> None:
        client, upstream = pair
        peer = {client: upstream, upstream: client}
        with selectors.DefaultSelector() as selector:
            for s in pair:
                selector.register(s, selectors.EVENT_READ)
            try:
                while True:
                    for key, _ in selector.select(timeout=0.5):
                        data = key.fileobj.recv(65536)
                        if not data:
                            raise ConnectionError
                        peer[key.fileobj].sendall(data)
                    if self.cut_off or self.stopping:
                        raise ConnectionError
            except (OSError, ConnectionError):
                pass
            finally:
                with self.lock:
                    self.pairs.discard(pair)
                for s in pair:
                    s.close()

    def cut(self, *, hang: bool = False) -> None:
        self.hang = hang
        self.cut_off = True
        with self.lock:
            pairs = list(self.pairs)
        for pair in pairs:
            for s in pair:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def restore(self) -> None:
        self.cut_off = False
        held, self.held = self.held, []
        for s in held:
            s.close()

    def close(self) -> None:
        self.stopping = True
        self.cut()
        self.listener.close()
        self.thread.join(timeout=5)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
