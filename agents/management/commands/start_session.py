from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from agents.services import session_start
from boards.models import Task
from common.errors import KandevError


class Command(BaseCommand):
    help = "Start an agent session for a task; --force (with --reason) bypasses the session limits."

    def add_arguments(self, parser):
        parser.add_argument("task_id")
        parser.add_argument("--force", action="store_true")
        parser.add_argument("--reason", default="")

    def handle(self, *args, task_id, force, reason, **options):
        try:
            task = Task.objects.select_related("workflow").filter(pk=task_id).first()
        except ValidationError:
            task = None
        if task is None:
            raise CommandError(f"No task {task_id}.")
        try:
            # actor=None: an operator at the console.
            session = session_start(task=task, actor=None, force=force, reason=reason)
        except KandevError as refused:
            raise CommandError(refused.detail) from None
        self.stdout.write(f"Session {session.pk} is {session.status}.")
