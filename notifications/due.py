"""The due-date pass, run by every background pass: a live task whose due date has passed
(and is not done) is news for its assignee and its watchers (`due`), and an event for the
workspace's webhooks (`task.due`), once per due date (`DuePassed`, unique: passes in several
processes at once tell it once)."""

import datetime

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from boards.messages import task_data
from boards.models import Task
from notifications import news, watching, webhooks
from notifications.models import DuePassed
from notifications.rules import News
from workflows.models import StepKind

# Due dates further back than this when first seen (kandev was off, or the date was set in
# the past) are old news: the pass does not dig them up, and its work stays bounded.
LOOKBACK = datetime.timedelta(days=2)
BATCH = 200  # due dates told per pass at most; the next pass takes the rest


def due_pass(*, now: datetime.datetime | None = None) -> int:
    """Tell of the due dates that passed since the last pass; how many."""
    now = now or timezone.now()
    told = DuePassed.objects.filter(task=OuterRef("pk"), due_at=OuterRef("due_at"))
    passed = (
        Task.objects.filter(due_at__lte=now, due_at__gt=now - LOOKBACK, archived_at__isnull=True, is_ephemeral=False)
        .exclude(step__kind=StepKind.DONE)
        .exclude(Exists(told))
        .select_related("workflow")
        .order_by("due_at", "id")[:BATCH]
    )
    count = 0
    for task in passed:
        try:
            with transaction.atomic():
                DuePassed.objects.create(task=task, due_at=task.due_at, told_at=now)
                _tell(task)
        except IntegrityError:  # another process told of it first
            continue
        count += 1
    return count


def _tell(task: Task) -> None:
    workspace_id = task.workflow.workspace_id
    people = set(watching.watchers([task.pk], workspace_id).get(task.pk, ()))
    if task.assignee_id is not None:
        people.add(task.assignee_id)
    detail = {"title": task.title, "due_at": task.due_at.isoformat()}
    news.deliver(
        [News(person, "due", task.pk, None, detail) for person in sorted(people)], workflow_id=task.workflow_id
    )
    webhooks.publish(workspace_id=workspace_id, event="task.due", data={"task": task_data(task)})
