"""The service-level pass, run by every background pass beside the due-date pass
(notifications/due.py): a live task admitted in an active step whose age since its cycle
started (`Task.started_at`) passed its class's service level is news for its watchers
(`past_sle`), once per task (`SlePassed`, unique: passes in several processes at once tell
it once).

Each pass looks at BATCH tasks at most, the longest-running first, that started at least a
day ago (the shortest service level) and were not told of yet; it reads the service levels
of their boards once each (flow/analytics.py `sle`, the last 30 days, as the cards show
them). A task that passed its level longer than LOOKBACK ago when first seen (kandev was
off, or the level was just lowered) is recorded without news: old news is not dug up.
"""

import datetime

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from boards.models import Task
from flow import analytics
from flow.instants import Window
from flow.serializers import DEFAULT_WINDOW
from notifications import news, watching
from notifications.models import SlePassed
from notifications.rules import News
from workflows.models import StepKind

LOOKBACK = datetime.timedelta(days=2)
BATCH = 200
DAY = datetime.timedelta(days=1)


def sle_pass(*, now: datetime.datetime | None = None) -> int:
    """Tell of the tasks that passed their service level since the last pass; how many."""
    now = now or timezone.now()
    told = SlePassed.objects.filter(task=OuterRef("pk"))
    running = (
        Task.objects.occupying()
        .filter(step__kind=StepKind.ACTIVE, started_at__lte=now - DAY)
        .exclude(Exists(told))
        .select_related("workflow")
        .order_by("started_at", "id")[:BATCH]
    )
    levels: dict = {}
    count = 0
    for task in running:
        if task.workflow_id not in levels:
            sles = analytics.sle(task.workflow, Window(now - DEFAULT_WINDOW, now))["sles"]
            levels[task.workflow_id] = {row["class_of_service"]: row["days"] for row in sles}
        days = levels[task.workflow_id].get(task.class_of_service)
        passed_at = None if days is None else task.started_at + days * DAY
        if passed_at is None or passed_at >= now:
            continue
        try:
            with transaction.atomic():
                SlePassed.objects.create(task=task, days=days, told_at=now)
                if passed_at > now - LOOKBACK:
                    _tell(task, days)
                    count += 1
        except IntegrityError:  # another process told of it first
            continue
    return count


def _tell(task: Task, days: int) -> None:
    people = sorted(watching.watchers([task.pk], task.workflow.workspace_id).get(task.pk, ()))
    detail = {"title": task.title, "days": days, "started_at": task.started_at.isoformat()}
    news.deliver([News(person, "past_sle", task.pk, None, detail) for person in people], workflow_id=task.workflow_id)
