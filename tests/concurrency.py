"""Real-thread races: the one helper every concurrency test uses."""

import threading

from django.db import close_old_connections, connection


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
