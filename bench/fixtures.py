"""Benchmark boards. Needs Django set up (bench/run.py does it)."""

import itertools
from datetime import timedelta

from django.db import connection
from django.utils import timezone

from accounts.models import ApiToken
from boards.models import Priority, Task
from boards.placement import GAP
from tests.factories import board
from workflows.models import Lane, Membership, Role, Workflow, WorkflowStep, Workspace, create_first_lane

_names = itertools.count()


def owner_with_token(username: str = "bench"):
    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username=username)
    workspace = Workspace.objects.create(name="Bench", slug=f"bench-{next(_names)}")
    Membership.objects.create(workspace=workspace, user=user, role=Role.OWNER)
    _, key = ApiToken.issue(user=user, name="bench")
    return user, workspace, key


def workflow_with_steps(workspace, name: str, steps: list[dict]) -> tuple[Workflow, list[WorkflowStep]]:
    """`steps`: dicts of WorkflowStep fields; `pull_from` names an earlier step's index."""
    workflow = Workflow.objects.create(workspace=workspace, name=f"{name} {next(_names)}")
    create_first_lane(workflow)
    made = []
    for position, spec in enumerate(steps):
        spec = dict(spec)
        feeder = spec.pop("pull_from", None)
        made.append(
            WorkflowStep.objects.create(
                workflow=workflow,
                position=position,
                pull_from_step=made[feeder] if feeder is not None else None,
                **spec,
            )
        )
    return workflow, made


def kanban(workspace, name: str):
    """Backlog -> In Progress (limit 5, pulls from Backlog) -> Review (limit 3, pulls from
    In Progress) -> Done: the shape of the built-in template, without agent actions."""
    steps = board(
        workspace=workspace, name=f"{name} {next(_names)}", active={"In Progress": 5, "Review": 3}, pulls="each"
    )
    return steps[0].workflow, list(steps)


def bulk_tasks(step: WorkflowStep, count: int, *, label: str = "Task") -> None:
    """Seed an UNLIMITED step in one statement.

    A fixture shortcut: admission into an unlimited step always admits, so inserting the
    rows directly gives the same board as `count` calls of task_create, minutes faster.
    Limited steps are always filled through the admission service (pull.reconcile_board).
    """
    assert not step.is_limited, "limited steps are filled through the admission service"
    now = timezone.now()
    priorities = list(Priority)
    lane = Lane.objects.filter(workflow_id=step.workflow_id).order_by("position").first()
    Task.objects.bulk_create(
        [
            Task(
                workflow_id=step.workflow_id,
                step=step,
                lane=lane,
                title=f"{label} {i}: a realistic card title of some length",
                priority=priorities[i % len(priorities)],
                position=(i + 1) * GAP,  # the keys task_create gives
                entered_step_at=now - timedelta(seconds=count - i),
            )
            for i in range(count)
        ],
        batch_size=2000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE boards_task")
