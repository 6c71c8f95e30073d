"""Real-thread races: the one helper every concurrency test uses."""

import contextlib
import functools
import threading
import time

import psycopg
from django.db import close_old_connections, connection


def rounds(n: int):
    """Run a race test's body `n` times within one test: each round builds a board (or team)
    of its own, so the rounds need no flush between them, and a transactional test flushes
    the database once rather than once per round."""

    def wrap(test):
        @functools.wraps(test)
        def run(*args, **kwargs):
            for _ in range(n):
                test(*args, **kwargs)

        return run

    return wrap


def race(n: int, action) -> list:
    """Run `action(i)` in n threads released together by a barrier, each on its own database
    connection (closed when it ends). Returns each thread's result, or the exception it raised."""
    barrier = threading.Barrier(n)
    outcomes = [None] * n

    def run(i):
        try:
            barrier.wait(timeout=60)
            outcomes[i] = action(i)
        except Exception as exc:  # returned to the test, which asserts on it
            outcomes[i] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=180)
    close_old_connections()
    return outcomes


def race_ok(n: int, action) -> list:
    """`race`, for races in which no thread may fail: their results."""
    outcomes = race(n, action)
    failures = [o for o in outcomes if isinstance(o, Exception)]
    assert not failures, failures
    return outcomes


@contextlib.contextmanager
def committed_after(fragment: str, change):
    """While inside, `change()` runs once, on a connection of its own (another request, which
    commits), just after the first query of this connection whose SQL holds `fragment`.
    Yields a list that holds True once it has run."""
    ran = []

    def other_request():
        try:
            change()
        finally:
            connection.close()

    def after_the_query(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if not ran and fragment in sql:
            thread = threading.Thread(target=other_request)
            thread.start()
            thread.join()
            ran.append(True)
        return result

    with connection.execute_wrapper(after_the_query):
        yield ran


def wait_until_a_backend_waits_on_a_lock(timeout: float = 30) -> bool:
    """True once another PostgreSQL backend is blocked on a row lock (pg_stat_activity)."""
    deadline = time.monotonic() + timeout
    with psycopg.connect(**_dsn(), autocommit=True) as watcher:
        while time.monotonic() < deadline:
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND wait_event_type = 'Lock'",
                [connection.settings_dict["NAME"]],
            ).fetchone()[0]
            if waiting:
                return True
            watcher.execute("SELECT pg_sleep(0.02)")
    return False


def _dsn() -> dict:
    s = connection.settings_dict
    return {"dbname": s["NAME"], "user": s["USER"], "host": s["HOST"], "port": s["PORT"] or 5432}
