from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from agents.models import AgentSession
from agents.services import session_cancel
from common.errors import KandevError


class Command(BaseCommand):
    help = "Cancel an agent session (queued, starting or running)."

    def add_arguments(self, parser):
        parser.add_argument("session_id")
        parser.add_argument("--reason", default="Cancelled by an operator.")

    def handle(self, *args, session_id, reason, **options):
        try:
            session = AgentSession.objects.filter(pk=session_id).first()
        except ValidationError:
            session = None
        if session is None:
            raise CommandError(f"No session {session_id}.")
        try:
            session = session_cancel(session=session, actor=None, reason=reason)
        except KandevError as refused:
            raise CommandError(refused.detail) from None
        self.stdout.write(f"Session {session.pk} is {session.status}.")
