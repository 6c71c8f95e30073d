"""Real uvicorn servers for end-to-end tests, on the test database."""

import os
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import httpx
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def test_database_url() -> str:
    """DATABASE_URL of the database the tests use (pytest-django's test database)."""
    db = connection.settings_dict
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return f"sqlite:///{db['NAME']}"
    password = f":{quote(db['PASSWORD'], safe='')}" if db["PASSWORD"] else ""
    user = quote(db["USER"], safe="")
    return f"postgresql://{user}{password}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, log_level: str = "warning", **env):
        self.log_level = log_level
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "CONN_MAX_AGE": "0",  # hold no connection across the tests' table flushes
            "DEBUG": "1",
            "PYTHONUNBUFFERED": "1",
            **env,
        }
        self.process = None

    def start(self) -> "Server":
        self.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "kandev.asgi:application",
             "--host", "127.0.0.1", "--port", str(self.port), "--log-level", self.log_level],
            cwd=ROOT, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited:\n{self.process.stdout.read()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("server did not become ready")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def output(self) -> str:
        """Everything the server printed (its log), once it has stopped."""
        self.stop()
        return self.process.stdout.read()


def off_loop(fn, *args, **kwargs):
    """Run a board write in a worker thread (its own connection; the test must be transactional).

    Playwright's sync API keeps an event loop in the test thread, and the broadcast after
    commit (async_to_sync) refuses to run in a thread with a running loop.
    """

    def call():
        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()
