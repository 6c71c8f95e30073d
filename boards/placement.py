"""Placing a task in a step: the pieces the admission and the pull share.

`decide()` is the WIP rule, judged by the limits `boards.limits` lists; `leave()` and
`enter()` move a task out of and into a step (in memory) and tell the occupancy ledger;
`save_entered()` writes many entered tasks in one statement; `after_admission()` tells the
step-event engine a task arrived.

A task's `position` is a sort key, not an index: keys are spaced `GAP` apart, a
task entering last takes `key_after()` the step's last key, and a move to index k takes a
key strictly between its two neighbours' (`key_at()`), so it writes one task row whatever
the size of the column. Only when the neighbours leave no room between them is the step
rebalanced: every key rewritten `GAP` apart, and the new order announced.
"""

import enum
from dataclasses import dataclass

from django.db.models import Case, Value, When

from boards.change import BoardChange
from boards.limits import limits
from boards.models import EventKind, Task
from boards.signals import task_admitted
from workflows.models import OnFull, WorkflowStep

# What `enter()` writes of a task that stays in its step (restored, made permanent), and of a moved one.
ENTERED_FIELDS = ["position", "admitted", "queued_at", "entered_step_at", "started_at", "updated_at"]
MOVED_FIELDS = ["step", *ENTERED_FIELDS]
# Room between neighbours' keys: 16 moves to one spot before the step is rebalanced. Keys
# stay far below 2**53, so browsers compare them exactly.
GAP = 2**16


class Outcome(enum.StrEnum):
    ADMITTED = "admitted"
    QUEUED = "queued"  # waiting in a queue-mode step's overflow queue
    FORCED = "forced"  # an owner's override: admitted over the limit
    EXPEDITED = "expedited"  # an expedite task admitted over a limit, within expedite_limit


@dataclass(frozen=True)
class Admission:
    task: Task
    outcome: Outcome

    @property
    def queued(self) -> bool:
        return self.outcome is Outcome.QUEUED


def decide(
    change: BoardChange,
    step: WorkflowStep,
    task: Task,
    *,
    source: WorkflowStep | None = None,
    force: bool = False,
    assigning: bool = False,
    can_queue: bool = True,
    lane=None,
) -> Outcome:
    """The admission rule for every limit: admitted when each one that applies has room;
    otherwise expedited (within an allowance that has room), forced (an owner's override),
    queued (a queue-mode step) or refused, naming the first full limit. `lane`: the lane
    the task enters (None: the one it is in)."""
    found = limits(change, step, task, source=source, assigning=assigning, lane=lane)
    full = next((limit for limit in found if not limit.allowance and limit.full), None)
    if full is None:
        return Outcome.ADMITTED
    if any(limit.allowance and not limit.full for limit in found):
        return Outcome.EXPEDITED
    if force:
        return Outcome.FORCED
    if can_queue and step.on_full == OnFull.QUEUE:
        return Outcome.QUEUED
    raise full.refusal(step)


def event_kind(outcome: Outcome, plain: str) -> str:
    return {
        Outcome.QUEUED: EventKind.QUEUED,
        Outcome.FORCED: EventKind.FORCED,
        Outcome.EXPEDITED: EventKind.EXPEDITED,
    }.get(outcome, plain)


def leave(change: BoardChange, task: Task) -> None:
    """Take `task` out of its step (before it changes): the ledger counts it out."""
    change.occupancy.leave(task, change.steps[task.step_id])


def enter(change: BoardChange, task: Task, step: WorkflowStep, outcome: Outcome, position=None) -> None:
    """Place `task` in `step` per `outcome` (in memory; the caller saves); the ledger counts it in."""
    task.step = step
    task.entered_step_at = change.now
    task.updated_at = change.now
    if outcome is Outcome.QUEUED:
        task.admitted, task.queued_at = False, change.now
    else:
        task.admitted, task.queued_at = True, None
    if position is None:
        position = key_after(change.occupancy.end(step))
    task.position = position
    change.occupancy.extend_end(step, position)
    change.occupancy.enter(task, step)
    start(task, step, change.now)


def start(task: Task, step: WorkflowStep, now) -> None:
    """A task's cycle starts at its first admission into an active step: `started_at`,
    set once (the history's first entry, as the flow figures read it), never reset."""
    if task.started_at is None and task.admitted and step.is_active:
        task.started_at = now


def save_entered(tasks: list[Task], step: WorkflowStep, now) -> None:
    """Save tasks that `enter()`ed `step` at `now` in one UPDATE.

    What they share is written once; only what differs per task (position, and admitted /
    queued_at when a queue-mode step admitted some and queued the rest) goes in a CASE.
    Django's bulk_update would build a CASE for every field: six times the SQL and Python.
    """
    if not tasks:
        return
    values = {"step": step, "entered_step_at": now, "updated_at": now}
    for name in ("position", "admitted", "queued_at", "started_at"):
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


def key_after(last: int) -> int:
    """The key of a task entering after `last` (-1: an empty step): the next multiple of GAP."""
    return (max(last, 0) // GAP + 1) * GAP


def key_at(change: BoardChange, step: WorkflowStep, task: Task, index: int | None) -> int:
    """The key that puts `task` at `index` of `step`'s order (None: at its end) while the
    others keep theirs. It reads only the neighbours (one or two rows of the board-order
    index); when they leave no key between them, the step is rebalanced."""
    others = _others_in_order(step, task).values_list("position", flat=True)
    if index == 0:
        below, above = -1, next(iter(others[:1]), None)
    elif index is not None and (neighbours := list(others[index - 1 : index + 1])):
        below, above = neighbours[0], next(iter(neighbours[1:]), None)
    else:  # at or past the end
        below, above = next(iter(others.reverse()[:1]), -1), None
    if above is None:
        return key_after(below)
    if above - below > 1:
        return below + (above - below) // 2
    return _rebalance(change, step, task, index)


def _others_in_order(step: WorkflowStep, task: Task):
    """The tasks the board shows in `step` (ephemeral ones too) but `task`, in board order."""
    return Task.objects.filter(step=step, archived_at__isnull=True).exclude(pk=task.pk).in_board_order()


def _rebalance(change: BoardChange, step: WorkflowStep, task: Task, index: int) -> int:
    """Key the step GAP apart with `task` at `index`, write the keys that change and put the
    step's new keys in the live message. Rare: a spot moved to 16 times over, or keys that
    were given tied or adjacent (or written before keys were spaced)."""
    others = list(_others_in_order(step, task).only("id", "position"))
    order = others[:index] + [task] + others[index:]
    rewritten = []
    for rank, item in enumerate(order, start=1):
        if item is not task and item.position != rank * GAP:
            rewritten.append(item)
        item.position = rank * GAP
    Task.objects.bulk_update(rewritten, ["position"])
    change.occupancy.extend_end(step, len(order) * GAP)  # the end, or above it: safe to enter after
    change.record.orders[step.pk] = [{"id": str(t.pk), "position": t.position} for t in order]
    return task.position


def reorder(change: BoardChange, task: Task, index: int | None) -> None:
    """Move `task` to `index` of its own step's order (None: its end), in memory (the caller saves)."""
    step = change.steps[task.step_id]
    task.position = key_at(change, step, task, index)
    change.occupancy.extend_end(step, task.position)
