"""Real kandev servers for tests and benchmarks: `uvicorn kandev.asgi:application` in child
processes, on a free loopback port or on one listening socket shared by several, serving
pytest-django's test database or a fresh PostgreSQL database made for the run.
"""

import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import httpx
import psycopg
from django.conf import settings
from django.db import connection
from psycopg import sql

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- databases ---------------------------------------------------------------------------


def url_of_test_database() -> str:
    """DATABASE_URL of the database pytest-django made, for child processes."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    auth = quote(db["USER"] or "", safe="")
    if db.get("PASSWORD"):
        auth += ":" + quote(db["PASSWORD"], safe="")
    return f"postgresql://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def database_url() -> str:
    """DATABASE_URL, which must name PostgreSQL (runs that make databases of their own)."""
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise RuntimeError("This run needs DATABASE_URL pointing at PostgreSQL.")
    return url


def _with_db(url: str, name: str, port: int | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if port is not None:
        user = netloc.rsplit("@", 1)[0] + "@" if "@" in netloc else ""
        netloc = f"{user}127.0.0.1:{port}"
    return urlunsplit((parts.scheme, netloc, f"/{name}", parts.query, parts.fragment))


def via_port(url: str, port: int) -> str:
    """The same database, reached through 127.0.0.1:`port` (a proxy)."""
    return _with_db(url, urlsplit(url).path.lstrip("/"), port)


@contextmanager
def fresh_database(suffix: str, *, migrate: bool = True):
    """A new database beside DATABASE_URL's (`<name>_<suffix>`), migrated unless told not
    to, dropped afterwards."""
    base = database_url()
    name = f"{urlsplit(base).path.lstrip('/') or 'postgres'}_{suffix}"
    drop = sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
    admin = psycopg.connect(base, autocommit=True)
    try:
        admin.execute(drop)
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        url = _with_db(base, name)
        if migrate:
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"],
                cwd=ROOT,
                env=production_env(url),
                check=True,
            )
        yield url
    finally:
        admin.execute(drop)
        admin.close()


# --- environments ------------------------------------------------------------------------


def serving_test_database(**extra: str) -> dict:
    """A child serving pytest-django's test database with the tests' own SECRET_KEY (tokens
    and stored secrets must read the same), holding no connection across table flushes."""
    return {
        **os.environ,
        "DATABASE_URL": url_of_test_database(),
        "SECRET_KEY": settings.SECRET_KEY,
        "CONN_MAX_AGE": "0",
        "PYTHONUNBUFFERED": "1",
        **extra,
    }


def production_env(url: str, **extra) -> dict:
    """A child as deployed: DEBUG off, a real secret, the pool size the README advises."""
    return {
        **os.environ,
        "DATABASE_URL": url,
        "DEBUG": "0",
        "SECRET_KEY": "run-" + secrets.token_hex(16),
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "WARNING",
        "DATABASE_CONNECT_TIMEOUT": "2",
        "DATABASE_POOL_MAX_SIZE": "10",  # per worker, as in production (README)
        "PYTHONUNBUFFERED": "1",
        **{k: str(v) for k, v in extra.items()},
    }


def eventually(condition, timeout: float = 30) -> None:
    """Wait for `condition()` to hold (what a server process brings about), failing after
    `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the servers did not get there in time"
        time.sleep(0.1)


# --- servers -----------------------------------------------------------------------------

SOCKET_SERVED = "Uvicorn running on socket"  # uvicorn's line once it accepts on an inherited socket


class Server:
    """`uvicorn kandev.asgi:application` (with `workers` processes) in a process group of its
    own, ready once GET /healthz answers 200. On a free loopback port, or on an inherited
    listening socket `sock` that sibling servers share. Its output goes to a log file.
    `command` replaces the uvicorn command line (one serving `port`, e.g. compose.yaml's)."""

    def __init__(
        self,
        env: dict,
        *,
        workers: int = 1,
        sock: socket.socket | None = None,
        log_level: str = "warning",
        command: list[str] | None = None,
        port: int | None = None,
        access_log: bool = False,
        options: list[str] = (),
    ):
        self.env = env
        self.sock = sock
        self.port = sock.getsockname()[1] if sock is not None else port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        where = ["--fd", str(sock.fileno())] if sock is not None else ["--port", str(self.port)]
        self.command = command or [
            sys.executable,
            "-m",
            "uvicorn",
            "kandev.asgi:application",
            "--host",
            "127.0.0.1",
            *where,
            "--workers",
            str(workers),
            *([] if access_log else ["--no-access-log"]),
            "--log-level",
            log_level,
            *options,
        ]
        self.logfile = tempfile.NamedTemporaryFile(prefix="kandev-server-", suffix=".log")  # noqa: SIM115
        self.logged_before_launch = 0  # a restarted server writes on after its killed self
        self.process: subprocess.Popen | None = None

    def launch(self) -> None:
        self.logged_before_launch = len(self.log())
        self.process = subprocess.Popen(
            self.command,
            cwd=ROOT,
            env=self.env,
            stdout=self.logfile,
            stderr=subprocess.STDOUT,
            pass_fds=[self.sock.fileno()] if self.sock is not None else [],
            start_new_session=True,
        )

    def start(self, timeout: float = 60) -> "Server":
        self.launch()
        try:
            self.wait_ready(timeout)
        except RuntimeError:
            self.stop()
            raise
        return self

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}:\n{self.log()}")
            try:
                if self.accepting() and httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"server did not become ready:\n{self.log()}")

    def accepting(self) -> bool:
        """On a shared socket a sibling answers /healthz, so this process's own word is
        needed: uvicorn logs that it runs on the socket once it accepts connections there
        (logged at info, the level a ServerPool's servers run at)."""
        return self.sock is None or SOCKET_SERVED in self.log()[self.logged_before_launch :]

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 20) -> int | None:
        """Ask the server to stop; kill its process group if it has not within `timeout`.
        Returns the exit code of a server that stopped by itself, None for a killed one."""
        if self.process is None:
            return None
        if self.process.poll() is not None:
            return self.process.returncode
        self.process.send_signal(signum)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            return None

    def kill(self) -> None:
        """SIGKILL: no clean-up, whatever the server was doing."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def log(self) -> str:
        return Path(self.logfile.name).read_text(errors="replace")

    def __enter__(self) -> "Server":
        return self if self.process is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.stop()
        self.logfile.close()


class ServerPool:
    """`workers` single-process servers accepting on one listening socket, like a pre-fork
    server: the kernel hands each connection to one of them, and a killed server's siblings
    keep serving the same port."""

    def __init__(self, env: dict, workers: int = 2):
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=512)
        self.sock.set_inheritable(True)
        self.base_url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.servers = [Server(env, sock=self.sock, log_level="info") for _ in range(workers)]
        for server in self.servers:  # all at once, then wait for each
            server.launch()
        for server in self.servers:
            server.wait_ready()

    def kill(self, i: int) -> None:
        self.servers[i].kill()

    def restart(self, i: int) -> None:
        self.servers[i].start()

    def dead(self) -> list[int]:
        return [i for i, server in enumerate(self.servers) if server.process.poll() is not None]

    def logs_text(self) -> str:
        return "\n".join(server.log() for server in self.servers)

    def __enter__(self) -> "ServerPool":
        return self

    def __exit__(self, *exc) -> None:
        for server in self.servers:
            server.close()
        self.sock.close()
