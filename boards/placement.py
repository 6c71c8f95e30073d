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
from boards.models import ClassOfService, EventKind, Task
from boards.signals import task_admitted
from kandev.errors import WipLimitReached
from workflows.models import OnFull, WorkflowStep

MOVED_FIELDS = ["step", "position", "admitted", "queued_at", "entered_step_at", "updated_at"]


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


@dataclass(frozen=True)
class Limit:
    """One limit that applies to an admission, as the change counts it now."""

    scope: str  # "step" | "group" | "person"
    id: object
    name: str
    limit: int
    occupied: int

    @property
    def full(self) -> bool:
        return self.occupied >= self.limit

    @property
    def room(self) -> int:
        return self.limit - self.occupied


def limited_for(wip_limit: int, group_id, feeder_group_id) -> bool:
    """Does a step with these settings pull from a feeder in `feeder_group_id` under a limit?
    Its own limit, or its group's when the feeder is outside the group; else it does not pull."""
    return bool(wip_limit) or (group_id is not None and group_id != feeder_group_id)


def limits(
    change: BoardChange, step: WorkflowStep, task: Task, *, source: WorkflowStep | None = None, assigning=False
) -> list[Limit]:
    """The limits an entry of `task` into `step` needs room in, in the order a refusal names
    them: step, group, person (product.md §2b). `source` is the step it comes from (None:
    from nowhere that counted — created, restored, made permanent, promoted from a queue);
    `assigning`: it stays in `source` (= `step`) and gets a new assignee: only the person's applies."""
    if task is not None and task.is_ephemeral:
        return []
    if source is not None and task is not None and not task.admitted:
        source = None  # a queued task held no place where it waited: it takes one on entry
    found = []
    if not assigning:
        if step.is_limited:
            found.append(Limit("step", step.pk, step.name, step.wip_limit, change.counts(step).occupied))
        group = change.group(step)
        if group is not None and (source is None or source.group_id != group.pk):
            found.append(Limit("group", group.pk, group.name, group.wip_limit, change.group_occupied(group)))
    person = _person(change, step, task, source, assigning)
    if person is not None:
        found.append(Limit("person", person.user_id, person.username, person.limit, person.occupied))
    return found


def _person(change, step, task, source, assigning):
    """An assignee's limit applies when their task starts to count in an active step."""
    if task is None or task.assignee_id is None or not step.is_active:
        return None
    if not assigning and source is not None and source.is_active:
        return None
    change.lock_members([task.assignee_id])
    person = change.persons.get(task.assignee_id)
    return person if person is not None and person.limit else None


def decide(
    change: BoardChange,
    step: WorkflowStep,
    task: Task,
    *,
    source: WorkflowStep | None = None,
    force: bool = False,
    assigning: bool = False,
    can_queue: bool = True,
) -> Outcome:
    """The admission rule for every limit: admitted when each one that applies has room;
    otherwise expedited (within the board's expedite allowance), forced (an owner's
    override), queued (a queue-mode step) or refused, naming the first full limit."""
    full = next((limit for limit in limits(change, step, task, source=source, assigning=assigning) if limit.full), None)
    if full is None:
        return Outcome.ADMITTED
    if _may_expedite(change, step, task, source):
        return Outcome.EXPEDITED
    if force:
        return Outcome.FORCED
    if can_queue and step.on_full == OnFull.QUEUE:
        return Outcome.QUEUED
    raise refusal(full, step)


def _may_expedite(change: BoardChange, step: WorkflowStep, task: Task, source: WorkflowStep | None) -> bool:
    """At most `expedite_limit` expedite tasks are in the board's active steps at once."""
    if task.class_of_service != ClassOfService.EXPEDITE or not step.is_active:
        return False
    already = source is not None and source.is_active and counts(task)  # counted where it is now
    return change.expedited() - already < change.workflow.expedite_limit


def refusal(limit: Limit, step: WorkflowStep) -> WipLimitReached:
    named_step = {"id": str(step.pk), "name": step.name}
    if limit.scope == "group":
        return WipLimitReached(
            scope="group",
            group={"id": str(limit.id), "name": limit.name},
            step=named_step,
            limit=limit.limit,
            occupied=limit.occupied,
            detail=f'Group "{limit.name}" is at its WIP limit ({limit.occupied} of {limit.limit}).',
        )
    if limit.scope == "person":
        return WipLimitReached(
            scope="person",
            assignee={"id": limit.id, "username": limit.name},
            limit=limit.limit,
            occupied=limit.occupied,
            detail=f"{limit.name} is at their WIP limit ({limit.occupied} of {limit.limit}).",
        )
    return WipLimitReached(
        scope="step",
        step=named_step,
        limit=limit.limit,
        occupied=limit.occupied,
        detail=f'Step "{step.name}" is at its WIP limit ({limit.occupied} of {limit.limit}).',
    )


def expedite_refusal(change: BoardChange) -> WipLimitReached:
    limit, occupied = change.workflow.expedite_limit, change.expedited()
    task_word = "task" if occupied == 1 else "tasks"
    return WipLimitReached(
        scope="expedite",
        limit=limit,
        occupied=occupied,
        detail=f"This board already has {occupied} expedite {task_word} in progress (limit {limit}).",
    )


def step_refusal(step: WorkflowStep, occupied: int, detail: str) -> WipLimitReached:
    """A step refusal with a message of the door's own (a bulk move names its room)."""
    return WipLimitReached(
        scope="step",
        step={"id": str(step.pk), "name": step.name},
        limit=step.wip_limit,
        occupied=occupied,
        detail=detail,
    )


def event_kind(outcome: Outcome, plain: str) -> str:
    return {
        Outcome.QUEUED: EventKind.QUEUED,
        Outcome.FORCED: EventKind.FORCED,
        Outcome.EXPEDITED: EventKind.EXPEDITED,
    }.get(outcome, plain)


def counts(task: Task) -> bool:
    """Does `task` occupy a place where it is (live, admitted, not ephemeral)?"""
    return task.archived_at is None and not task.is_ephemeral and task.admitted


def leave(change: BoardChange, task: Task) -> None:
    """Take `task` out of its step's counts; a step it held a place in may now fill."""
    step = change.steps[task.step_id]
    step_counts = change.counts(step)
    if task.archived_at is not None or task.is_ephemeral:
        return
    if step_counts.last_position is not None and task.position >= step_counts.last_position:
        step_counts.last_position = None  # the step's end moved; re-read when next needed
    if task.admitted:
        step_counts.occupied -= 1
        change.opened(step)
        group = change.group(step)
        if group is not None:
            change.opened(*change.group_steps(group))
        change.count_in(task, step, -1)
    else:
        step_counts.queued -= 1


def enter(change: BoardChange, task: Task, step: WorkflowStep, outcome: Outcome, position=None) -> None:
    """Place `task` in `step` per `outcome` (in memory; the caller saves)."""
    step_counts = change.counts(step)
    task.step = step
    task.entered_step_at = change.now
    task.updated_at = change.now
    if outcome is Outcome.QUEUED:
        task.admitted, task.queued_at = False, change.now
        step_counts.queued += 1
    else:
        task.admitted, task.queued_at = True, None
        if not task.is_ephemeral:
            step_counts.occupied += 1
            change.count_in(task, step, +1)
            change.arrived(step)
    if position is None:
        position = change.last_position(step) + 1
    task.position = position
    if step_counts.last_position is not None:
        step_counts.last_position = max(step_counts.last_position, position)


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
