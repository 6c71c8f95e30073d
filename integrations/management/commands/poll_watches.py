import time

from django.core.management.base import BaseCommand

from integrations.watch import PollReport, poll_due_watches


class Command(BaseCommand):
    help = (
        "Poll GitHub review watches. --once: one pass over every enabled watch that is not "
        "backing off; without it, loop and poll each watch at its own interval."
    )

    def add_arguments(self, parser):
        parser.add_argument("--once", action="store_true", help="One pass, then exit.")
        parser.add_argument(
            "--tick",
            type=float,
            default=5.0,
            help="Seconds between checks for due watches (loop mode).",
        )

    def handle(self, *args, once: bool, tick: float, **options):
        if once:
            self.report(poll_due_watches(ignore_interval=True))
            return
        while True:
            self.report(poll_due_watches())
            time.sleep(tick)

    def report(self, reports: list[PollReport]) -> None:
        for report in reports:
            line = (
                f"watch {report.watch_id}: {len(report.admitted)} admitted, "
                f"{len(report.deferred)} deferred, {len(report.archived)} archived"
            )
            if report.error:
                self.stderr.write(f"{line}; {report.error}")
            else:
                self.stdout.write(line)
