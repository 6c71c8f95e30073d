import signal

from django.core.management.base import BaseCommand, CommandError

from agents.runner import Runner


class Command(BaseCommand):
    help = (
        "The reference agent runner: claims sessions from a kandev server over HTTP and runs a "
        "command for each (task context in KANDEV_* environment variables and JSON on stdin). "
        "SIGTERM stops it cleanly."
    )
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--server", required=True, help="Base URL, e.g. http://127.0.0.1:8000")
        parser.add_argument("--token", required=True, help="An API token (ideally workspace-scoped).")
        parser.add_argument("--command", required=True, dest="agent_command", help="Shell command per session.")
        parser.add_argument("--concurrency", type=int, default=1, help="Sessions run at once.")
        parser.add_argument("--poll", type=float, default=2.0, help="Seconds between claims when idle.")
        parser.add_argument("--name", default="", help="The runner's name, shown on its sessions.")

    def handle(self, *args, server, token, agent_command, concurrency, poll, name, **options):
        if concurrency < 1:
            raise CommandError("--concurrency must be at least 1.")
        runner = Runner(
            server=server,
            token=token,
            command=agent_command,
            concurrency=concurrency,
            poll_seconds=poll,
            name=name,
            out=self.stdout,
        )
        signal.signal(signal.SIGTERM, runner.stop)
        signal.signal(signal.SIGINT, runner.stop)
        runner.run()
