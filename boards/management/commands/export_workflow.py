import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from boards.backup import export_backup
from workflows.formats import dump_yaml
from workflows.models import Workflow


class Command(BaseCommand):
    help = "Print a workflow with its tasks as a portable document (YAML, or JSON with --format json)."

    def add_arguments(self, parser):
        parser.add_argument("workflow_id")
        parser.add_argument("--format", choices=["yaml", "json"], default="yaml")
        parser.add_argument("--no-tasks", action="store_true", help="The steps and limits only (a template).")

    def handle(self, *args, workflow_id, format, no_tasks, **options):
        try:
            workflow = Workflow.objects.get(pk=uuid.UUID(workflow_id))
        except (ValueError, Workflow.DoesNotExist):
            raise CommandError(f'No workflow with id "{workflow_id}".') from None
        document = export_backup([workflow], tasks=not no_tasks)
        if format == "json":
            self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(dump_yaml(document), ending="")
