import sys
import uuid
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db.models import Q

from boards.backup import backup_import
from common.errors import Invalid, KandevError
from workflows.models import Workspace
from workflows.portable import parse_document


class Command(BaseCommand):
    help = "Create the workflows of a portable document (YAML or JSON file), with their tasks, in a workspace."

    def add_arguments(self, parser):
        parser.add_argument("workspace", help="The workspace's slug or id.")
        parser.add_argument("file", help='The document; "-" reads standard input.')
        parser.add_argument("--format", choices=["yaml", "json"], help="Default: json for *.json files, else yaml.")
        parser.add_argument("--force", action="store_true", help="Admit tasks past full limits (recorded as forced).")

    def handle(self, *args, workspace, file, format, force, **options):
        target = Workspace.objects.filter(_slug_or_id(workspace)).first()
        if target is None:
            raise CommandError(f'No workspace "{workspace}".')
        try:
            raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from None
        fmt = format or ("json" if file.endswith(".json") else "yaml")
        try:
            document = parse_document(raw, fmt=fmt)
            imported = backup_import(workspace=target, document=document, actor=None, force=force)
        except Invalid as exc:
            lines = [f"  {field}: {' '.join(msgs)}" for field, msgs in exc.extra["errors"].items()]
            raise CommandError("\n".join([exc.detail, *lines])) from None
        except KandevError as exc:  # unreadable, or a task a full limit refuses
            raise CommandError(exc.detail) from None
        for workflow, result, _ in imported.boards:
            tasks = result.created + result.queued + result.archived
            self.stdout.write(
                f'Imported "{workflow.name}" ({workflow.pk}) with {workflow.steps.count()} steps and {tasks} tasks.'
            )


def _slug_or_id(value: str) -> Q:
    try:
        return Q(pk=uuid.UUID(value))
    except ValueError:
        return Q(slug=value)
