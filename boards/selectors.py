"""Reads of the board. Kept out of transactions (SQLite serializes write transactions)."""

from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from boards.models import LIVE, Task, TaskEvent
from workflows.models import StepKind


def step_counts(step_ids) -> dict:
    """{step_id: (occupied, queued)} for the given steps, in one query."""
    rows = (
        Task.objects.filter(LIVE, step_id__in=list(step_ids))
        .values("step_id")
        .annotate(occupied=Count("id", filter=Q(admitted=True)), queued=Count("id", filter=Q(admitted=False)))
    )
    counts = {step_id: (0, 0) for step_id in step_ids}
    counts.update({row["step_id"]: (row["occupied"], row["queued"]) for row in rows})
    return counts


def with_occupied(memberships):
    """`memberships` annotated with `occupied`: the person's live admitted tasks in active
    steps of every board of the workspace, what their personal limit counts (product.md §2b.3).
    One correlated subquery, so a list of members costs one query."""
    assigned = (
        Task.objects.occupying()
        .filter(
            assignee_id=OuterRef("user_id"),
            workflow__workspace_id=OuterRef("workspace_id"),
            step__kind=StepKind.ACTIVE,
        )
        .order_by()
        .values("assignee_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return memberships.annotate(occupied=Coalesce(Subquery(assigned, output_field=IntegerField()), Value(0)))


def board_events(*, workflow):
    return TaskEvent.objects.filter(workflow=workflow).select_related("actor")
