"""The flow figures kept per board version, so a board that has not changed answers its
flow page again without reading its history again.

An answer is kept under its board's *stamp*, everything a figure reads besides the history's
instants: the board's version (every change of its tasks, steps, groups, lanes and limits
counts it up), the workspace's configuration history (people's limits are the workspace's),
its members and the board's service levels. Any change to those makes a new key, so a kept
answer is never older than the board. A window that ends now (no `to`) is kept for the
minute it was asked in: ages and the window's end move with the clock, not with a version,
so for at most a minute they are those of the first request. The one input outside the
stamp, a member's renaming, shows after at most `KEPT_SECONDS`. An answer larger than
`KEPT_MAX_BYTES` (a year of cycle times of a busy board) is not kept.
"""

import hashlib
import pickle
import time

import orjson
from django.core.cache import cache
from django.db.models import Count, OuterRef, Subquery

from flow.models import ServiceLevel
from workflows.models import ConfigChange, Membership, Workflow

KEPT_SECONDS = 300
NOW_SECONDS = 60
# A user asks at most KANDEV_FLOW_RATE figures, each kept for KEPT_SECONDS: this bounds what
# they may keep in the shared cache (an answer above it is computed every time).
KEPT_MAX_BYTES = 256_000


def stamp(workflow) -> tuple:
    """What the board's figures read besides its history, as of now: one query."""

    def latest(queryset, field):
        return Subquery(queryset.order_by(f"-{field}").values(field)[:1])

    def count(queryset, by):
        return Subquery(queryset.order_by().values(by).annotate(n=Count("pk")).values("n")[:1])

    members = Membership.objects.filter(workspace_id=OuterRef("workspace_id"))
    levels = ServiceLevel.objects.filter(workflow_id=OuterRef("pk"))
    return tuple(
        Workflow.objects.filter(pk=workflow.pk)
        .annotate(
            config=latest(ConfigChange.objects.filter(workspace_id=OuterRef("workspace_id")), "id"),
            member=latest(members, "id"),
            members=count(members, "workspace_id"),
            level=latest(levels, "set_at"),
            levels=count(levels, "workflow_id"),
        )
        .values_list("version", "config", "member", "members", "level", "levels")
        .get()
    )


def kept(workflow, figure: str, query: dict, compute):
    """The figure's answer for `query` (the request's parameters, `format` aside): kept, or
    `compute()`d and kept."""
    asked = sorted(query.items())
    now = None if "to" in query else int(time.time() // NOW_SECONDS)
    key_source = orjson.dumps([str(workflow.pk), figure, stamp(workflow), asked, now], default=str)
    key = f"flow:{workflow.pk}:{figure}:{hashlib.sha256(key_source).hexdigest()}"
    kept_answer = cache.get(key)
    if kept_answer is not None:
        return pickle.loads(kept_answer)
    answer = compute()
    written = pickle.dumps(answer, pickle.HIGHEST_PROTOCOL)
    if len(written) <= KEPT_MAX_BYTES:  # a few large answers would crowd out the rest
        cache.set(key, written, KEPT_SECONDS)
    return answer
