import os

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.utils.crypto import salted_hmac

from boards.admission import task_create
from boards.changes import reconcile_board
from boards.models import Priority, Task
from flow.demo import seed_month
from workflows import services
from workflows.models import Membership, Role, Workflow, Workspace

USERNAME = "demo"
BOARD_NAME = "Demo board"
# Ranked by priority: the two most urgent are in Review (limit 2), the next seven were
# committed to Ready, from which In Progress (limit 3) pulled three, and the rest are options
# in Backlog.
TASKS = [
    ("Fix login redirect loop", Priority.CRITICAL),
    ("Rotate the leaked staging key", Priority.CRITICAL),
    ("Board shows stale WIP counts", Priority.HIGH),
    ("Add CSV export of tasks", Priority.MEDIUM),
    ("Dark mode for the board", Priority.LOW),
    ("Upgrade to Django 5.2", Priority.HIGH),
    ("Write onboarding guide", Priority.MEDIUM),
    ("Speed up the pull query", Priority.HIGH),
    ("Rename 'Backlog' in the docs", Priority.NONE),
    ("Keyboard shortcuts for moves", Priority.LOW),
    ("Webhook retries with backoff", Priority.MEDIUM),
    ("Audit log page for owners", Priority.MEDIUM),
    ("Flaky test in the pull suite", Priority.HIGH),
    ("Archive tasks older than a year", Priority.LOW),
    ("Per-step colour picker", Priority.NONE),
    ("Session metrics dashboard", Priority.MEDIUM),
    ("Tidy up the README", Priority.LOW),
]


def demo_password() -> str:
    # Derived from SECRET_KEY, so every run can print it without storing it anywhere; with
    # DEBUG off kandev refuses the public development key (settings), so it is never public.
    return salted_hmac("kandev.seed_demo", USERNAME).hexdigest()[:20]


class Command(BaseCommand):
    help = (
        "Create (once) the demo user, the Demo workspace and a Kanban board whose WIP limits and "
        "feeders make the pull visible; print the login every time."
    )

    def add_arguments(self, parser):
        parser.add_argument("--reset-password", action="store_true", help="Set the demo user's password back.")

    def handle(self, *args, reset_password, **options):
        user, created = get_user_model().objects.get_or_create(username=USERNAME)
        if created or reset_password:
            user.set_password(demo_password())
            user.save(update_fields=["password"])
        workspace = Workspace.objects.filter(slug="demo").first()
        if workspace is None:
            workspace = services.workspace_create(name="Demo", slug="demo", owner=user)
        Membership.objects.get_or_create(workspace=workspace, user=user, defaults={"role": Role.OWNER})
        board = Workflow.objects.filter(workspace=workspace, name=BOARD_NAME).first()
        if board is None:
            board = services.workflow_create(
                workspace=workspace,
                name=BOARD_NAME,
                description="Backlog holds options; moving a card to Ready commits to it. In Progress "
                "(WIP limit 3) pulls from Ready: move a card out of it and watch the next one arrive.",
                template="kanban",
            )
        if not Task.objects.filter(workflow=board).exists():
            seed_month(board, user)  # a month of finished work: the flow page is not empty
            backlog, ready, _, review, _ = board.steps.order_by("position")
            for rank, (title, priority) in enumerate(sorted(TASKS, key=lambda t: t[1])):
                step = review if rank < 2 else ready if rank < 9 else backlog
                task_create(workflow=board, step=step, actor=user, title=title, priority=priority)
            reconcile_board(workflow_id=board.pk)
        password = demo_password() if user.check_password(demo_password()) else None
        port = os.environ.get("PORT", "8000")
        self.stdout.write(f"Demo board ready. Log in at http://127.0.0.1:{port}{settings.LOGIN_URL}")
        self.stdout.write(f"  username: {USERNAME}")
        self.stdout.write(
            f"  password: {password}"
            if password
            else "  password: (changed since it was seeded; run seed_demo --reset-password)"
        )
