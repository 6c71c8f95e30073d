from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from accounts.models import ApiToken
from workflows.models import Workspace


class Command(BaseCommand):
    help = "Issue an API token for a user; the token is the last word printed."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="A label to recognise the token by.")
        parser.add_argument("--workspace", default=None, help="Scope it to this workspace (slug): a runner token.")

    def handle(self, *args, username, name, workspace, **options):
        try:
            user = get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f'No user named "{username}".') from None
        scope = None
        if workspace is not None:
            scope = Workspace.objects.filter(slug=workspace, memberships__user=user).first()
            if scope is None:
                raise CommandError(f'"{username}" is not a member of a workspace "{workspace}".')
        _, key = ApiToken.issue(user=user, name=name, workspace=scope)
        self.stdout.write(f"Token for {username} (shown once): {key}")
