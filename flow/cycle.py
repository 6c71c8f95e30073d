"""`kandev_task_cycle_seconds`: a task's cycle time, observed once, when its history shows
its first entry into a done step.

Call `observe_first_finishes(workflow_id, task_ids)` after the change that moved the tasks
has committed (its events are then in TaskEvent), with the tasks that entered a step in
it; tasks that did not just finish for the first time are left alone. One query.
"""

from django.db.models import Count, F, Max, Min, Q

from boards.models import EventKind, TaskEvent
from common import metrics
from flow.kinds import BACKLOG, DONE, BoardSteps
from flow.queries import ENTRY_KINDS


def observe_first_finishes(workflow, task_ids) -> int:
    """Observe the cycle time of each task whose only entry into a done step is its last
    event; the number observed."""
    board = BoardSteps.of(workflow)
    done = board.ids(DONE)
    if not task_ids or not done:
        return 0
    active = ~Q(to_step_id__in=board.ids(BACKLOG) + done) & Q(to_step__isnull=False)
    entering = Q(to_step_id__in=done)
    rows = (
        TaskEvent.objects.filter(workflow=workflow, task_id__in=task_ids, kind__in=ENTRY_KINDS)
        .exclude(kind=EventKind.MOVED, from_step_id=F("to_step_id"))  # reorders
        .values("task_id")
        .annotate(
            started=Min("at", filter=active),
            finished=Min("at", filter=entering),
            finishes=Count("id", filter=entering),
            last=Max("at"),
        )
        .order_by()
    )
    observed = 0
    for row in rows:
        just_finished = row["finishes"] == 1 and row["finished"] == row["last"]
        if not just_finished or row["started"] is None or row["started"] > row["finished"]:
            continue  # re-entered done, still elsewhere, or finished without being active
        metrics.TASK_CYCLE.labels(str(workflow.pk)).observe((row["finished"] - row["started"]).total_seconds())
        observed += 1
    return observed
