import time

from django.conf import settings
from django.core.management.base import BaseCommand

from boards.changes import reconcile_all


class Command(BaseCommand):
    help = "Pull into limited steps that have free capacity and waiting queued or feeder tasks."

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument("--interval", type=float, default=settings.KANDEV_RECONCILE_INTERVAL_SECONDS)

    def handle(self, *args, once, interval, **options):
        while True:
            changed = reconcile_all()
            self.stdout.write(f"reconciled: {changed} board(s) changed")
            if once:
                return
            time.sleep(interval)
