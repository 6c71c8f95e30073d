"""The open-task quota: an account may have created KANDEV_MAX_OPEN_TASKS_PER_USER (10,000)
tasks that are still live (not archived or deleted), so that no single account can fill the
database; 0 turns it off. Over it, the create answers 409 `quota_exceeded` and writes nothing.

Who created a task is its creation event's actor; tasks created by no account (webhook
intakes, review watches) count for nobody. Counted without a lock, so that creates on
different boards never wait for each other: concurrent creates by one account may pass the
quota by as many as are in flight at once (a few, against thousands). Counting costs as much
as the account has tasks, so it is not done on every create: a count that leaves room for n
more lets the next n // 2 creates pass uncounted (a budget in the shared cache), so an
account fills its quota with a dozen counts and never passes it.
"""

import contextlib

from django.conf import settings
from django.core.cache import cache

from boards.models import EventKind, Task
from common.errors import QuotaExceeded

BUDGET_SECONDS = 600
# Every kind a task's creation event may have (boards/placement.py's event_kind).
CREATION_KINDS = (EventKind.CREATED, EventKind.QUEUED, EventKind.FORCED, EventKind.EXPEDITED)


def check_open_tasks(*, actor) -> None:
    """At the top of the one task-create service, which every door calls."""
    limit = settings.KANDEV_MAX_OPEN_TASKS_PER_USER
    if not limit or actor is None:
        return
    budget = f"quota:open-tasks:{limit}:{actor.pk}"
    with contextlib.suppress(Exception):  # no budget yet (ValueError), or the cache is down: count
        if cache.decr(budget) >= 0:
            return
    created = Task.objects.filter(
        archived_at__isnull=True,
        events__actor=actor,
        events__kind__in=CREATION_KINDS,
        events__detail__action="create",
    )
    count = created.count()
    if count >= limit:
        raise QuotaExceeded(
            quota="open_tasks",
            limit=limit,
            detail=f"You have created {limit} tasks that are still open, the most one account may have. "
            "Archive or delete finished ones to make room.",
        )
    with contextlib.suppress(Exception):  # the cache is down: the next create counts again
        cache.set(budget, (limit - count - 1) // 2, BUDGET_SECONDS)
