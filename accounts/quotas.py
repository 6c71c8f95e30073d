"""How much one account may create, so that no single account can fill the database. Each
quota is a setting; 0 turns it off. Over a quota the create answers 409
`{"code": "quota_exceeded", "quota", "limit", "detail"}` and writes nothing.

- Workspaces: an account may own KANDEV_MAX_WORKSPACES_PER_USER (50). Creating one makes
  its creator the owner; leaving the owner role (or the workspace) frees the place. The
  creator's user row is locked while it counts, so concurrent creates never pass the quota.
- Invites: a workspace may have KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE (100) open (not used,
  revoked or expired) invite links at once; a used, revoked or expired link frees its place.
  The workspace's row is locked while it counts.
- Tasks: an account may have created KANDEV_MAX_OPEN_TASKS_PER_USER (10,000) tasks that are
  still live (not archived or deleted); archiving or deleting one frees its place. Who created
  a task is its creation event's actor. Tasks created by no account (webhook intakes, review
  watches) count for nobody. Counted without a lock, so that creates on different boards
  never wait for each other: concurrent creates by one account may pass the quota by as many
  as are in flight at once (a few, against thousands). Counting costs as much as the account
  has tasks, so it is not done on every create: a count that leaves room for n more lets the
  next n // 2 creates pass uncounted (a budget in the shared cache), so an account fills its
  quota with a dozen counts and never passes it.
"""

import contextlib

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils import timezone

from boards.models import EventKind, Task
from common.errors import Conflict
from teams.models import Invite
from workflows.models import Membership, Role, Workspace

BUDGET_SECONDS = 600
# Every kind a task's creation event may have (boards/placement.py's event_kind).
CREATION_KINDS = (EventKind.CREATED, EventKind.QUEUED, EventKind.FORCED, EventKind.EXPEDITED)


class QuotaExceeded(Conflict):
    def __init__(self, *, quota: str, limit: int, detail: str):
        super().__init__(detail, code="quota_exceeded", quota=quota, limit=limit)


def check_workspaces(*, owner) -> None:
    """Inside the workspace create's transaction."""
    limit = settings.KANDEV_MAX_WORKSPACES_PER_USER
    if not limit:
        return
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
    if Membership.objects.filter(user=owner, role=Role.OWNER).count() >= limit:
        raise QuotaExceeded(
            quota="workspaces",
            limit=limit,
            detail=f"You own {limit} workspaces, the most one account may own here. "
            "Leave or hand over one you no longer need, or ask your administrator.",
        )


def check_open_invites(*, workspace: Workspace) -> None:
    """Inside the invite create's transaction."""
    limit = settings.KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE
    if not limit:
        return
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    open_invites = Invite.objects.filter(
        workspace=workspace, used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
    )
    if open_invites.count() >= limit:
        raise QuotaExceeded(
            quota="open_invites",
            limit=limit,
            detail=f"This workspace has {limit} open invite links, the most it may have at once. "
            "Revoke one that is no longer needed.",
        )


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
