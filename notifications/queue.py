"""The durable task queue that deliveries run on: Django's task framework (the django-tasks
backport) with its database backend (django-tasks-db). A task is a row written in the
transaction that decides it, so it exists exactly when that decision committed; workers
claim rows with SELECT ... FOR UPDATE SKIP LOCKED, so any number of them share the queue.

Who runs it: with KANDEV_BACKGROUND=embedded each server process runs a worker thread
(kandev.lifespan); otherwise `manage.py kandev_worker` does (and `manage.py db_worker`
adds workers that only run tasks).

A worker that dies mid-task leaves its row "running" forever: the backend does not know
workers. `reclaim_abandoned` (every background pass) puts a row running for longer than
KANDEV_TASK_LEASE_SECONDS back on the queue, so it runs again. Every task here is bounded
far below that lease (HTTP and SMTP timeouts), so a live worker's task is never taken from
it; one that died may have done part of its work, so tasks are written to be run twice
(a webhook delivery is at least once: receivers tell repeats by `X-Kandev-Delivery`).
"""

import datetime
import logging
import os
import socket
import threading

from django.conf import settings
from django.db import connection
from django.utils import timezone
from django.utils.crypto import get_random_string
from django_tasks.base import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

logger = logging.getLogger(__name__)

QUEUE_POLL_SECONDS = 1.0  # an idle worker looks for due tasks this often


def reclaim_abandoned(*, now: datetime.datetime | None = None) -> int:
    """Put tasks whose worker died (running past the lease) back on the queue; how many."""
    now = now or timezone.now()
    cutoff = now - datetime.timedelta(seconds=settings.KANDEV_TASK_LEASE_SECONDS)
    reclaimed = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING, started_at__lt=cutoff).update(
        status=TaskResultStatus.READY, started_at=None
    )
    if reclaimed:
        logger.warning("%s task(s) put back on the queue: their worker died", reclaimed)
    return reclaimed


def worker_id() -> str:
    return f"{socket.gethostname()[:30]}-{os.getpid()}-{get_random_string(8)}"


def new_worker(*, batch: bool = False) -> Worker:
    """A worker of every queue, as `manage.py db_worker --queue-name='*'` runs one."""
    return Worker(
        queue_names=["*"],
        interval=QUEUE_POLL_SECONDS,
        batch=batch,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id(),
        excluded_queue_names=[],
    )


class QueueThread:
    """A worker in a thread of this process (the embedded server, kandev_worker). Stopping
    lets a task under way finish."""

    def __init__(self):
        self.worker = new_worker()
        self.thread = threading.Thread(target=self._run, name="kandev-tasks")

    def _run(self) -> None:
        try:
            self.worker.run()
        except Exception:
            logger.exception("task worker thread stopped")
        finally:
            connection.close()

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.worker.running = False
        self.thread.join()
