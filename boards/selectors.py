"""Reads of the board. Kept out of transactions (SQLite serializes write transactions)."""

from django.db.models import Count, Q

from boards.models import LIVE, Task, TaskEvent


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


def board_events(*, workflow):
    return TaskEvent.objects.filter(workflow=workflow).select_related("actor")
