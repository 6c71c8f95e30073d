"""Placing a task in a step: the pieces the admission and the pull share.

`decide()` is the WIP rule; `leave()` and `enter()` keep the board change's counts current
as a task goes, and mark the steps that may fill because of it (room left behind, a
pullable task arrived in a feeder); `save_entered()` writes many entered tasks in one statement;
`after_admission()` tells the step-event engine a task arrived.
"""

import enum
from dataclasses import dataclass

from django.db.models import Case, Value, When

from boards.locking import BoardChange
from boards.models import EventKind, Task
from boards.signals import task_admitted
from kandev.errors import WipLimitReached
from workflows.models import OnFull, WorkflowStep

MOVED_FIELDS = ["step", "position", "admitted", "queued_at", "entered_step_at", "updated_at"]


class Outcome(enum.StrEnum):
    ADMITTED = "admitted"
    QUEUED = "queued"  # waiting in a queue-mode step's overflow queue
    FORCED = "forced"  # an owner's override: admitted over the limit


@dataclass(frozen=True)
class Admission:
    task: Task
    outcome: Outcome

    @property
    def queued(self) -> bool:
        return self.outcome is Outcome.QUEUED


def decide(change: BoardChange, step: WorkflowStep, *, counts: bool = True, force: bool = False) -> Outcome:
    """The WIP rule. `counts` is False for ephemeral tasks, which never occupy a step."""
    if not counts:
        return Outcome.ADMITTED
    occupied = change.counts(step).occupied
    if not step.is_limited or occupied < step.wip_limit:
        return Outcome.ADMITTED
    if force:
        return Outcome.FORCED
    if step.on_full == OnFull.QUEUE:
        return Outcome.QUEUED
    raise WipLimitReached(step=step, occupied=occupied)


def event_kind(outcome: Outcome, plain: str) -> str:
    return {Outcome.QUEUED: EventKind.QUEUED, Outcome.FORCED: EventKind.FORCED}.get(outcome, plain)


def leave(change: BoardChange, task: Task) -> None:
    """Take `task` out of its step's counts; a step it held a place in may now fill."""
    step = change.steps[task.step_id]
    counts = change.counts(step)
    if task.archived_at is not None or task.is_ephemeral:
        return
    if counts.last_position is not None and task.position >= counts.last_position:
        counts.last_position = None  # the step's end moved; re-read when next needed
    if task.admitted:
        counts.occupied -= 1
        change.opened(step)
    else:
        counts.queued -= 1


def enter(change: BoardChange, task: Task, step: WorkflowStep, outcome: Outcome, position=None) -> None:
    """Place `task` in `step` per `outcome` (in memory; the caller saves)."""
    counts = change.counts(step)
    task.step = step
    task.entered_step_at = change.now
    task.updated_at = change.now
    if outcome is Outcome.QUEUED:
        task.admitted, task.queued_at = False, change.now
        counts.queued += 1
    else:
        task.admitted, task.queued_at = True, None
        if not task.is_ephemeral:
            counts.occupied += 1
            change.arrived(step)
    if position is None:
        position = change.last_position(step) + 1
    task.position = position
    if counts.last_position is not None:
        counts.last_position = max(counts.last_position, position)


def save_entered(tasks: list[Task], step: WorkflowStep, now) -> None:
    """Save tasks that `enter()`ed `step` at `now` in one UPDATE.

    What they share is written once; only what differs per task (position, and admitted /
    queued_at when a queue-mode step admitted some and queued the rest) goes in a CASE.
    Django's bulk_update would build a CASE for every field: six times the SQL and Python.
    """
    if not tasks:
        return
    values = {"step": step, "entered_step_at": now, "updated_at": now}
    for name in ("position", "admitted", "queued_at"):
        distinct = {getattr(t, name) for t in tasks}
        if len(distinct) == 1:
            values[name] = distinct.pop()
        else:
            values[name] = Case(
                *(When(pk=t.pk, then=Value(getattr(t, name))) for t in tasks),
                output_field=Task._meta.get_field(name),
            )
    Task.objects.filter(pk__in=[t.pk for t in tasks]).update(**values)


def after_admission(change: BoardChange, task: Task, outcome: Outcome) -> None:
    if outcome is not Outcome.QUEUED:
        task_admitted.send(sender=Task, change=change, task=task, step=change.steps[task.step_id])


def renumber(change: BoardChange, step: WorkflowStep, task: Task, index: int) -> None:
    """Put `task` at `index` of the step's order and number the step 0..n-1."""
    others = list(
        Task.objects.filter(step=step, archived_at__isnull=True)
        .exclude(pk=task.pk)
        .in_board_order()
        .only("id", "position")
    )
    index = max(0, min(index, len(others)))
    order = others[:index] + [task] + others[index:]
    moved = []
    for position, item in enumerate(order):
        if item.position != position or item is task:
            item.position = position
            moved.append(item)
    Task.objects.bulk_update([t for t in moved if t is not task], ["position"])
    change.counts(step).last_position = len(order) - 1
    change.orders[step.pk] = [str(t.pk) for t in order]
