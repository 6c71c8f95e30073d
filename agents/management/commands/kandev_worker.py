import logging
import signal
import threading

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from agents.services import reconcile_sessions
from boards.changes import reconcile_all
from integrations.watch import poll_due_watches

logger = logging.getLogger(__name__)


class Command(BaseCommand):
    help = (
        "The background worker: fills steps with stranded capacity (the pull reconciler), fails "
        "agent sessions whose lease expired, promotes queued sessions that fit, and polls the review "
        "watches that are due. Several may run at once: every change takes the board's locks."
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
        if not once:
            for signum in (signal.SIGTERM, signal.SIGINT):
                signal.signal(signum, lambda *_: stop.set())
        while True:
            self.run_pass()
            if once or stop.wait(interval):
                return
            close_old_connections()  # a long-lived process: drop connections the server closed

    def run_pass(self) -> None:
        try:
            boards = reconcile_all()
            failed, promoted = reconcile_sessions()
            watches = poll_due_watches()
        except Exception:  # a broken pass must not end the worker; the next one retries
            logger.exception("worker pass failed")
            return
        self.stdout.write(
            f"boards filled: {boards}, sessions failed (lease expired): {failed}, "
            f"sessions promoted: {promoted}, review watches polled: {len(watches)}"
        )
