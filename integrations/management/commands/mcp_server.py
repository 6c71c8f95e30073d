from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from integrations.mcp_tools import build_server


class Command(BaseCommand):
    help = "Serve kandev's MCP tools over stdio, acting as the given user."
    requires_system_checks = []  # an MCP client starts this often; keep its stderr quiet

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="Username the tools act as.")

    def handle(self, *args, user: str, **options):
        acting = get_user_model().objects.filter(username=user, is_active=True).first()
        if acting is None:
            raise CommandError(f'No active user "{user}".')
        # stdout carries the protocol: nothing else may be printed there.
        build_server(user_id=acting.pk).run("stdio")
