import json
import uuid

from django.core.management.base import BaseCommand, CommandError

from workflows.formats import dump_yaml
from workflows.models import Workflow
from workflows.portable import export_document


class Command(BaseCommand):
    help = "Print a workflow as a portable document (YAML, or JSON with --format json)."

    def add_arguments(self, parser):
        parser.add_argument("workflow_id")
        parser.add_argument("--format", choices=["yaml", "json"], default="yaml")

    def handle(self, *args, workflow_id, format, **options):
        try:
            workflow = Workflow.objects.get(pk=uuid.UUID(workflow_id))
        except (ValueError, Workflow.DoesNotExist):
            raise CommandError(f'No workflow with id "{workflow_id}".') from None
        document = export_document([workflow])
        if format == "json":
            self.stdout.write(json.dumps(document, indent=2, ensure_ascii=False))
        else:
            self.stdout.write(dump_yaml(document), ending="")
