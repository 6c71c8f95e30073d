"""The pull: a limited step with room fills itself, in the same transaction.

First its own overflow queue (oldest `queued_at`, then position, id: a bulk move queues its
tasks in one instant, in the given order), then its feeder's tasks in pull order
(expedite first, then lane order, then position, priority rank, created, id), until full —
in itself and in its group; a task is skipped while its own cell, lane or assignee is full
(a pulled task stays in its lane). `settle()` fills every step the
change's worklist holds, and what a fill does marks more (its counts tell the ledger): the
feeder it took from has room, and the step it filled now holds pullable tasks for its
consumers. So a pull cascades up and down the feeder chain until the board is settled.
A fill asks the ledger for room and tells it what moved; it counts nothing itself.
"""

from functools import partial

from django.db import transaction
from django.db.models import F, Subquery, Value
from django.db.models.functions import Coalesce

from boards import dependencies
from boards.change import BoardChange
from boards.limits import held, limits
from boards.models import LIVE, EventKind, Task
from boards.placement import Outcome, after_admission, key_after, save_entered, start
from boards.pullable import pullable
from common import metrics
from workflows.models import WorkflowStep


def settle(change: BoardChange) -> None:
    """Fill the marked steps, in board order, until no step is left to fill. Before each
    fill, the dependents of what the change finished or reopened get their blockers
    (`dependencies.follow`): a dependent freed on this board is pulled in this change.

    It ends: each fill admits tasks it has not admitted into that step before in this
    change (`worklist.filled`), or marks nothing."""
    while True:
        dependencies.follow(change)
        step = change.worklist.next(change.occupancy)
        if step is None:
            return
        fill(change, step)


def pull_candidates(feeder: WorkflowStep):
    """Feeder tasks a pull may take (`boards.pullable`), in pull order. Rows another
    transaction holds are skipped (`next_in_order`)."""
    # The order joins the lanes: only the task rows are locked.
    return next_in_order(pullable(Task.objects.filter(step=feeder)).in_pull_order(), of=("self",))


def next_in_order(tasks, **of):
    """Lock `tasks` for a pull or a promotion, skipping rows another transaction holds. The
    lock is FOR NO KEY UPDATE: it leaves alone the key-share locks that a row referring to a
    task takes while it is written (a watch, a notification, a comment, written after a
    change committed and outside the board's lock); FOR UPDATE would wait on them, and
    skipping them would pull or promote out of order."""
    return tasks.select_for_update(no_key=True, skip_locked=True, **of)


def room(change: BoardChange, step: WorkflowStep, source: WorkflowStep | None = None) -> int | None:
    """How many more tasks `step` admits from `source` (None: from its queue) by its own
    and its group's limits; None when neither limits it."""
    rooms = [limit.room for limit in limits(change, step, None, source=source)]
    return min(rooms) if rooms else None


def _take(change: BoardChange, step: WorkflowStep, source, candidates, free: int) -> tuple[list[Task], list]:
    """Up to `free` candidates in order, skipping those whose cell, lane or assignee is full;
    each taken task leaves `source` (None: its queue in `step`) and enters `step` in the
    ledger as it is taken, so the next candidate's assignee is judged with it. Also returns
    the rows as read (annotations included)."""
    taken, seen, rows = [], [], []
    while len(taken) < free:
        want = free - len(taken)
        batch = list((candidates.exclude(pk__in=seen) if seen else candidates)[:want])
        rows += batch
        seen += [task.pk for task in batch]
        for task in _as_changed(change, batch):
            if held(change, step, task, source=source) is not None:
                continue
            taken.append(task)
            change.occupancy.leave(task, source or step)
            task.admitted = True
            change.occupancy.enter(task, step)
        if len(batch) < want:
            break
    return taken, rows


def fill(change: BoardChange, step: WorkflowStep) -> None:
    """Fill `step` while it has room: its own queue first, then its feeder."""
    if change.occupancy.step(step).queued > 0:
        free = room(change, step)
        if free is None or free > 0:
            _promote_queue(change, step, free)
    feeder = change.steps.get(step.pull_from_step_id)
    if feeder is None:
        return
    free = room(change, step, feeder)  # a feeder in the step's own group needs no group room
    if free is None or free <= 0:
        return  # an unlimited step does not pull
    counts = change.occupancy.step(step)
    candidates = _not_filled_before(change, step, pull_candidates(feeder))
    end_unknown = counts.end is None
    if end_unknown:
        # The step's last task left in this change: read its new end with the candidates,
        # not in a query of its own, so a pull costs the same whatever it vacated.
        end = Task.objects.filter(LIVE, step=step).order_by("-position").values("position")[:1]
        candidates = candidates.annotate(step_end=Subquery(end))
    pulled, rows = _take(change, step, feeder, candidates, free)
    if not pulled:
        return
    if end_unknown:
        counts.end = -1 if rows[0].step_end is None else rows[0].step_end
    last = change.occupancy.end(step)
    for task in pulled:
        last = key_after(last)
        task.step, task.position = step, last
        task.entered_step_at = task.updated_at = change.now
        start(task, step, change.now)
    change.occupancy.extend_end(step, last)
    save_entered(pulled, step, change.now)
    transaction.on_commit(partial(metrics.TASKS_PULLED.inc, len(pulled)))
    for task in pulled:
        change.record.event(task, EventKind.PULLED, from_step=feeder, to_step=step, action="pull")
    change.record.announce("task.pulled", task=pulled[0])
    _filled(change, step, pulled)


def _as_changed(change: BoardChange, rows) -> list[Task]:
    """The change's own instance of each row it already wrote (the task a door created or
    moved), so the door's answer and the live message show where the fill put it."""
    return [change.record.tasks.get(row.pk, row) for row in rows]


def _not_filled_before(change: BoardChange, step: WorkflowStep, tasks):
    """A task a fill admitted into `step` once in this change is not admitted there again
    (an `on_enter` that sends it back to the feeder would pull it forever)."""
    again = [task_id for step_id, task_id in change.worklist.filled if step_id == step.pk]
    return tasks.exclude(pk__in=again) if again else tasks


def _filled(change: BoardChange, step: WorkflowStep, tasks: list[Task]) -> None:
    change.worklist.filled.update((step.pk, task.pk) for task in tasks)
    for task in tasks:
        after_admission(change, task, Outcome.ADMITTED)


def _promote_queue(change: BoardChange, step: WorkflowStep, free: int | None) -> None:
    queued = change.occupancy.step(step).queued
    queue = Task.objects.queued().filter(step=step).in_queue_order()
    queue = _not_filled_before(change, step, next_in_order(queue))
    promoted, _ = _take(change, step, None, queue, queued if free is None else free)
    if not promoted:
        return
    waits = {}
    for task in promoted:
        waits[task.pk] = (change.now - task.queued_at).total_seconds()
        task.queued_at, task.updated_at = None, change.now
        start(task, step, change.now)
    started = {"started_at": Coalesce(F("started_at"), Value(change.now))} if step.is_active else {}
    Task.objects.filter(pk__in=[t.pk for t in promoted]).update(
        admitted=True, queued_at=None, updated_at=change.now, **started
    )
    for task in promoted:
        change.record.event(task, EventKind.PROMOTED, to_step=step, action="promote", waited_seconds=waits[task.pk])
    change.record.announce("task.pulled", task=promoted[0])
    _filled(change, step, promoted)
