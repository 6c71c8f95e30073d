import logging
import signal
import threading
from collections.abc import Callable

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from agents.services import reconcile_sessions
from boards.changes import reconcile_all
from flow.past_sle import sle_pass
from integrations.watch import poll_due_watches
from notifications.due import due_pass
from notifications.queue import QueueThread, reclaim_abandoned

logger = logging.getLogger(__name__)


def tick() -> str | None:
    """One pass of the background work; its summary, or None when it failed (logged).
    Passes in several processes at once are safe: every change takes the board's locks, and
    sessions and watches are claimed with SKIP LOCKED, so none is done twice."""
    try:
        boards = reconcile_all()
        failed, promoted = reconcile_sessions()
        watches = poll_due_watches()
        reclaimed = reclaim_abandoned()
        due = due_pass()
        past = sle_pass()
    except Exception:  # a broken pass must not end the loop; the next one retries
        logger.exception("background pass failed")
        return None
    return (
        f"boards filled: {boards}, sessions failed (lease expired): {failed}, "
        f"sessions promoted: {promoted}, review watches polled: {len(watches)}, "
        f"tasks of dead workers queued again: {reclaimed}, due dates told: {due}, "
        f"tasks past their service level told: {past}"
    )


def run_until(stop: threading.Event, interval: float, report: Callable[[str], object]) -> None:
    """A pass every `interval` seconds until `stop` is set (the worker; the embedded server)."""
    while True:
        summary = tick()
        if summary is not None:
            report(summary)
        if stop.wait(interval):
            return
        close_old_connections()  # a long-lived loop: drop connections the server closed


class Command(BaseCommand):
    help = (
        "The background worker: fills steps with stranded capacity (the pull reconciler), fails "
        "agent sessions whose lease expired, promotes queued sessions that fit, polls the review "
        "watches that are due, tells of passed due dates and service levels, and runs the task queue "
        "(e-mail batches, webhook deliveries; "
        "`db_worker` runs more task workers). Several may run at once: every change takes the "
        "board's locks, and tasks are claimed with SKIP LOCKED."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument(
            "--interval",
            type=float,
            default=settings.KANDEV_RECONCILE_INTERVAL_SECONDS,
            help="Seconds between passes (KANDEV_RECONCILE_INTERVAL_SECONDS).",
        )

    def handle(self, *args, once, interval, **options):
        stop = threading.Event()
        if once:
            stop.set()
        else:
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, lambda *_: stop.set())
        queue = None if once else QueueThread()
        if queue is not None:
            queue.start()
        try:
            run_until(stop, interval, self.stdout.write)
        finally:
            if queue is not None:
                queue.stop()
