"""A demo workspace and board for `bin/dev`: idempotent, prints the login."""

import os

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from boards.admission import task_create
from boards.models import Priority
from workflows.models import Workflow
from workflows.services import step_update, workflow_create, workspace_create

DEMO_TASKS = {
    "Backlog": [
        ("Import customer feedback", Priority.HIGH),
        ("Dark mode for the board", Priority.LOW),
        ("Rate-limit the webhook intake", Priority.CRITICAL),
        ("Write onboarding guide", Priority.MEDIUM),
        ("Archive stale tasks nightly", Priority.NONE),
    ],
    "In Progress": [
        ("Keyboard moves on the board", Priority.HIGH),
        ("WIP metrics dashboard", Priority.MEDIUM),
        ("Agent session heartbeat", Priority.CRITICAL),
    ],
    "Review": [
        ("Export boards as YAML", Priority.MEDIUM),
        ("Template: PR review", Priority.LOW),
        ("Audit trail page", Priority.HIGH),  # Review is full: this one waits in its queue
    ],
    "Done": [
        ("Atomic admission service", Priority.HIGH),
        ("Pull from feeder step", Priority.MEDIUM),
    ],
}


class Command(BaseCommand):
    help = "Create a demo user, workspace and board (once), and print how to log in."

    def handle(self, *args, **options):
        username = os.environ.get("KANDEV_DEMO_USER", "demo")
        password = os.environ.get("KANDEV_DEMO_PASSWORD", "kandev-demo")
        User = get_user_model()
        user = User.objects.filter(username=username).first()
        if user is None:
            user = User.objects.create_user(username=username, password=password)
        workflow = Workflow.objects.filter(
            workspace__memberships__user=user, name="Delivery"
        ).first()
        if workflow is None:
            workspace = workspace_create(name="Demo team", owner=user)
            workflow = workflow_create(workspace=workspace, name="Delivery", template="kanban")
            steps = {step.name: step for step in workflow.steps.all()}
            # Show the queue mode too: a full Review queues new work instead of refusing it.
            steps["Review"] = step_update(step=steps["Review"], actor=user, on_full="queue")
            for step_name, tasks in DEMO_TASKS.items():
                for title, priority in tasks:
                    task_create(
                        workflow=workflow, actor=user, step=steps[step_name],
                        title=title, priority=priority,
                    )
        self.stdout.write(
            f"Demo board: /workflows/{workflow.pk}/  log in as {username} / {password}"
        )
