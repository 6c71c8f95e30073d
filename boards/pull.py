"""The pull: a limited step that gained capacity fills itself, in the same transaction.

First its own overflow queue (oldest `queued_at`, then position, id: a bulk move queues its
tasks in one instant, in the given order), then its feeder's tasks in
board order (position, priority rank, created, id), until full; each pulled task opens
capacity in the feeder, so the pull cascades up the feeder chain. The admission calls
`fill()` for the steps a change vacated; the reconciler runs the same `fill()`.
"""

import logging
from functools import partial

from django.db import transaction
from django.db.models import Subquery

from agents.models import HOLDING_SLOT
from boards.locking import BoardChange, board_change, board_transaction
from boards.models import LIVE, EventKind, Task
from boards.placement import Outcome, after_admission, save_entered
from kandev import metrics
from workflows.models import Workflow, WorkflowStep

logger = logging.getLogger(__name__)

def pull_candidates(feeder: WorkflowStep):
    """Feeder tasks a pull may take, in pull order. Rows another transaction holds are skipped,
    and so are tasks an agent is working on (a session starting or running)."""
    return (
        Task.objects.occupying()
        .filter(step=feeder)
        .exclude(agent_sessions__status__in=HOLDING_SLOT)
        .in_board_order()
        .select_for_update(skip_locked=True)
    )


def fill(change: BoardChange, step: WorkflowStep, _visited: set | None = None) -> None:
    visited = set() if _visited is None else _visited
    if step.pk in visited:  # feeder cycles are refused at configuration; this is the backstop
        return
    visited.add(step.pk)
    counts = change.counts(step)
    free = step.wip_limit - counts.occupied if step.is_limited else None
    if free is not None and free <= 0:
        return
    promoted = _promote_queue(change, step, free)
    if free is None or step.pull_from_step_id is None:
        return
    free -= promoted
    feeder = change.steps.get(step.pull_from_step_id)
    if free <= 0 or feeder is None:
        return
    feeder_counts = change.counts(feeder)
    candidates = pull_candidates(feeder)
    if counts.last_position is None:
        # The step's last task left in this change: read its new end with the candidates,
        # not in a query of its own, so a pull costs the same whatever it vacated.
        end = Task.objects.filter(LIVE, step=step).order_by("-position").values("position")[:1]
        candidates = candidates.annotate(step_end=Subquery(end))
    pulled = list(candidates[:free])
    if not pulled:
        return
    if counts.last_position is None:
        counts.last_position = -1 if pulled[0].step_end is None else pulled[0].step_end
    if feeder_counts.last_position is not None and max(t.position for t in pulled) >= feeder_counts.last_position:
        feeder_counts.last_position = None
    last = change.last_position(step)
    for task in pulled:
        last += 1
        task.step, task.position = step, last
        task.entered_step_at = task.updated_at = change.now
    counts.last_position = last
    save_entered(pulled, step, change.now)
    transaction.on_commit(partial(metrics.TASKS_PULLED.inc, len(pulled)))
    counts.occupied += len(pulled)
    feeder_counts.occupied -= len(pulled)
    for task in pulled:
        change.record(task, EventKind.PULLED, from_step=feeder, to_step=step, action="pull")
    change.announce("task.pulled", task=pulled[0])
    for task in pulled:
        after_admission(change, task, Outcome.ADMITTED)
    fill(change, feeder, visited)


def _promote_queue(change: BoardChange, step: WorkflowStep, free: int | None) -> int:
    if change.counts(step).queued <= 0:
        return 0
    queue = (
        Task.objects.queued()
        .filter(step=step)
        .order_by("queued_at", "position", "id")
        .select_for_update(skip_locked=True)
    )
    promoted = list(queue if free is None else queue[:free])
    if not promoted:
        return 0
    counts = change.counts(step)
    waits = {}
    for task in promoted:
        waits[task.pk] = (change.now - task.queued_at).total_seconds()
        task.admitted, task.queued_at, task.updated_at = True, None, change.now
    Task.objects.filter(pk__in=[t.pk for t in promoted]).update(
        admitted=True, queued_at=None, updated_at=change.now
    )
    counts.occupied += len(promoted)
    counts.queued -= len(promoted)
    for task in promoted:
        change.record(task, EventKind.PROMOTED, to_step=step, action="promote", waited_seconds=waits[task.pk])
    change.announce("task.pulled", task=promoted[0])
    for task in promoted:
        after_admission(change, task, Outcome.ADMITTED)
    return len(promoted)


@board_transaction
def reconcile_board(*, workflow_id) -> bool:
    """Fill every step of one board that has room; True when anything moved."""
    with board_change(workflow_id) as change:
        for step in sorted(change.steps.values(), key=lambda s: s.position):
            fill(change, step)
        return change.dirty


def reconcile_all() -> int:
    """One reconciler pass over every board with a limit or a queue; returns boards changed."""
    changed = 0
    workflow_ids = (
        Workflow.objects.filter(steps__wip_limit__gt=0).values_list("id", flat=True).distinct()
    )
    for workflow_id in workflow_ids:
        try:
            changed += reconcile_board(workflow_id=workflow_id)
        except Exception:  # one broken board must not stop the others
            logger.exception("reconciling board %s failed", workflow_id)
    return changed
