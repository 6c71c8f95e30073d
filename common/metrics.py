"""Prometheus counters and histograms every layer may count into.

Counters and the histogram are process-local values that
prometheus_client aggregates across processes when PROMETHEUS_MULTIPROC_DIR is set
(multiprocess mode: each worker writes its own files; the scrape merges them).
Label values are ids: names change and are not unique.
"""

import os

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

ADMISSIONS_REJECTED = Counter(
    "kandev_admissions_rejected", "Admissions refused because a limit was full.", ["scope", "reason"]
)
TASKS_PULLED = Counter("kandev_tasks_pulled", "Tasks pulled from a feeder step.")
BOARD_SNAPSHOTS = Counter(
    "kandev_board_snapshots",
    "Whole-board reads, by how this process got the board: cached (this version already here), "
    "applied (the changes since its cached version applied) or built (read from the database).",
    ["how"],
)
SESSIONS_REJECTED = Counter(
    "kandev_sessions_rejected",
    "Agent sessions refused by a concurrency limit (scope: workspace or workflow).",
    ["workflow", "scope"],
)
SESSION_QUEUE_WAIT = Histogram(
    "kandev_session_queue_wait_seconds",
    "Time a session waited in the queue, observed when it is promoted.",
    ["workflow"],
    buckets=(1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600),
)

TASK_CYCLE = Histogram(
    "kandev_task_cycle_seconds",
    "A task's cycle time (first entry into an active step to first entry into a done step),"
    " observed when it first enters a done step.",
    ["workflow"],
    buckets=(60, 600, 3600, 4 * 3600, 86400, 2 * 86400, 4 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 90 * 86400),
)


def counters_exposition() -> bytes:
    """Counters and histograms: this process's, or every process's in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry)
    return generate_latest(REGISTRY)
