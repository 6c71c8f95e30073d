"""The admission service: the doors' transactions that put a task into a step.

Every door that puts a live task into a step (REST, browser, bulk moves, the step-event
engine, integrations, MCP, restore, ephemeral -> permanent, pulls) ends in `decide()`,
called on a board locked by `board_change()` (change.py), with occupancy read after the
locks (occupancy.py). A refusal raises `WipLimitReached` inside the transaction, so nothing of the
refused request persists.
"""

import uuid

from boards import dependencies
from boards.change import BoardChange
from boards.changes import board_change, task_change
from boards.limits import Entry, ExpediteAllowance, StepLimit
from boards.locking import board_transaction
from boards.models import ClassOfService, EventKind, Priority, Task, occupies
from boards.placement import (
    ENTERED_FIELDS,
    MOVED_FIELDS,
    Admission,
    Outcome,
    after_admission,
    decide,
    enter,
    event_kind,
    key_at,
    leave,
    reorder,
    save_entered,
)
from boards.quotas import check_open_tasks
from boards.signals import task_retired
from common import sql
from common.errors import Conflict, Forbidden, Invalid
from workflows.access import member_step, role_in
from workflows.models import OnFull, Role, WorkflowStep


def check_force(*, workflow, actor, force: bool, reason: str) -> None:
    """An override needs an owner and a reason. `actor=None` is an operator at the CLI."""
    if not force:
        return
    if not (reason or "").strip():
        raise Invalid({"reason": ["A reason is required to force an admission."]})
    if actor is not None and role_in(actor, workflow.workspace_id) != Role.OWNER:
        raise Forbidden("Only a workspace owner may force an admission.")


def check_external_ref(change: BoardChange, external_ref: str | None) -> None:
    """An external ref (a GitHub issue, say) names at most one live task of a board."""
    if (
        external_ref
        and Task.objects.filter(workflow=change.workflow, external_ref=external_ref, archived_at__isnull=True).exists()
    ):
        raise Conflict(f'A live task already has external_ref "{external_ref}".', code="external_ref_exists")


# --- services: each is one door's outermost transaction -------------------------------


@board_transaction
def task_create(
    *,
    workflow,
    actor,
    title: str,
    step: WorkflowStep | None = None,
    description: str = "",
    priority: int = Priority.MEDIUM,
    position: int | None = None,
    is_ephemeral: bool = False,
    external_ref: str | None = None,
    assignee_id=None,
    class_of_service: str = ClassOfService.STANDARD,
    force: bool = False,
    reason: str = "",
    lane_id=None,
) -> Admission:
    """`lane_id`: the lane it goes in (None: the board's first)."""
    check_open_tasks(actor=actor)
    check_force(workflow=workflow, actor=actor, force=force, reason=reason)
    with board_change(workflow.pk, actor=actor) as change:
        target = change.board.step(step.pk) if step is not None else change.board.start_step()
        lane = change.board.lane(lane_id) if lane_id is not None else change.board.first_lane()
        check_external_ref(change, external_ref)
        if assignee_id is not None:
            change.occupancy.assignable(assignee_id)
        task = Task(
            workflow=change.workflow,
            title=title,
            description=description,
            priority=priority,
            is_ephemeral=is_ephemeral,
            external_ref=external_ref or None,
            assignee_id=assignee_id,
            class_of_service=class_of_service,
        )
        task.class_of_service = class_in_lane(change, task, target, lane)
        task.lane = lane
        outcome = decide(change, target, task, force=force)
        enter(change, task, target, outcome, position)
        sql.insert([task])
        change.record.created.add(task.pk)
        change.record.event(
            task, event_kind(outcome, EventKind.CREATED), to_step=target, reason=reason, action="create"
        )
        change.record.announce("task.created", task=task)
        after_admission(change, task, outcome)
        return Admission(task, outcome)


@board_transaction
def task_move(
    *,
    task: Task,
    to_step: WorkflowStep | uuid.UUID,
    actor,
    position: int | None = None,
    force: bool = False,
    reason: str = "",
    lane_id=None,
) -> Admission:
    """`to_step`: a step, or the id of one a request names. A step of the task's board needs
    no access read of its own (the actor may write that board); another is "No such step."
    unless the actor may see it, and then not in this workflow. `lane_id`: the lane it moves
    to (None: it stays in its own)."""
    step_id = getattr(to_step, "pk", to_step)
    with task_change(task, actor=actor) as (change, task):
        if step_id not in change.steps and not isinstance(to_step, WorkflowStep):
            member_step(actor, step_id)
        check_force(workflow=change.workflow, actor=actor, force=force, reason=reason)
        target = change.board.step(step_id)
        return move(change, task, target, position=position, force=force, reason=reason, lane_id=lane_id)


def class_in_lane(change: BoardChange, task: Task, step: WorkflowStep, lane) -> str:
    """The class of service `task` has once in `lane` (and `step`): entering the expedite
    lane makes it expedite, refused past the board's expedite allowance where it counts (a
    live task in an active step); leaving it makes it standard."""
    if lane.is_expedite:
        if task.class_of_service != ClassOfService.EXPEDITE and step.is_active and not task.is_ephemeral:
            previous, task.class_of_service = task.class_of_service, ClassOfService.EXPEDITE
            allowance = ExpediteAllowance.of(change, Entry(step, task, None, False))  # an entry into the class
            task.class_of_service = previous
            if allowance.full:
                raise allowance.refusal(step)
        return ClassOfService.EXPEDITE
    current = change.board.lanes.get(task.lane_id)
    if current is not None and current.is_expedite:
        return ClassOfService.STANDARD
    return task.class_of_service


def move(
    change: BoardChange, task: Task, target: WorkflowStep, *, position=None, force=False, reason="", lane_id=None
) -> Admission:
    """A move on a locked board: shared by the move API, a lane's deletion and the step-event
    engine. `lane_id`: the lane it moves to (None: it stays in its own)."""
    if task.archived_at is not None:
        raise Conflict("An archived task cannot be moved; restore it first.", code="task_archived")
    source = change.steps[task.step_id]
    lane = change.board.lane(lane_id) if lane_id is not None else change.board.lanes[task.lane_id]
    if lane.pk != task.lane_id:
        return _move_across_lanes(change, task, target, lane, position=position, force=force, reason=reason)
    if target.pk == source.pk:
        # Reordering inside a step is always allowed, even over the limit.
        outcome = Outcome.QUEUED if not task.admitted else Outcome.ADMITTED
        reorder(change, task, position)
        sql.update(task, ["position", "updated_at"])
        change.record.event(task, EventKind.MOVED, from_step=source, to_step=target, action="reorder")
        change.record.announce("task.moved", task=task)
        return Admission(task, outcome)
    outcome = decide(change, target, task, source=source, force=force)
    leave(change, task)
    enter(change, task, target, outcome, None if position is None else key_at(change, target, task, position))
    sql.update(task, MOVED_FIELDS)
    kind = event_kind(outcome, EventKind.MOVED)
    change.record.event(task, kind, from_step=source, to_step=target, reason=reason, action="move")
    change.record.announce("task.moved", task=task)
    after_admission(change, task, outcome)
    return Admission(task, outcome)


def _move_across_lanes(change, task, target, lane, *, position, force, reason) -> Admission:
    """A move into another lane (and maybe another step): an entry into its cell and lane,
    judged like any move; the task's class follows the expedite lane."""
    source, previous_lane = change.steps[task.step_id], change.board.lanes[task.lane_id]
    previous_class = task.class_of_service
    task.class_of_service = class_in_lane(change, task, target, lane)
    outcome = decide(change, target, task, source=source, force=force, lane=lane.pk)
    new_class, task.class_of_service = task.class_of_service, previous_class
    same_step, entered_step_at = target.pk == source.pk, task.entered_step_at
    if position is not None:
        key = key_at(change, target, task, position)
    else:
        key = task.position if same_step else None  # across lanes in its step, it keeps its place
    leave(change, task)
    task.lane, task.class_of_service = lane, new_class
    enter(change, task, target, outcome, key)
    if same_step:
        task.entered_step_at = entered_step_at  # it did not enter the step again
    sql.update(task, [*MOVED_FIELDS, "lane", "class_of_service"])
    kind = event_kind(outcome, EventKind.MOVED)
    change.record.event(
        task,
        kind,
        from_step=source,
        to_step=target,
        reason=reason,
        action="move",
        lane_id=str(lane.pk),
        from_lane_id=str(previous_lane.pk),
    )
    change.record.lanes_touched(previous_lane, lane)
    change.record.announce("task.moved", task=task)
    if not same_step:
        after_admission(change, task, outcome)
    return Admission(task, outcome)


def reassign(change: BoardChange, task: Task, assignee_id) -> None:
    """Give a locked task another assignee (or none): an admission for the new one when the
    task counts in an active step. A change of assignee never queues."""
    previous = task.assignee_id
    if assignee_id == previous:
        return
    change.occupancy.lock_members([previous, assignee_id])  # both rows at once: ascending id
    if assignee_id is not None:
        change.occupancy.assignable(assignee_id)
    step = change.steps[task.step_id]
    outcome = Outcome.ADMITTED
    if occupies(task) and step.is_active:
        task.assignee_id = assignee_id
        outcome = decide(change, step, task, source=step, assigning=True, can_queue=False)
        task.assignee_id = previous
    change.occupancy.leave(task, step)
    task.assignee_id = assignee_id
    change.occupancy.enter(task, step)
    kind = event_kind(outcome, EventKind.ASSIGNED)  # `expedited` when past a full person's limit
    change.record.event(task, kind, to_step=step, action="assign", assignee_id=assignee_id, previous=previous)
    change.worklist.arrived(step)  # a task a pull skipped for its assignee may be pullable now


def reclassify(change: BoardChange, task: Task, class_of_service: str) -> None:
    """Change a locked task's class of service. Marking it expedite where it counts in an
    active step is refused past the board's `expedite_limit`."""
    if class_of_service == task.class_of_service:
        return
    step = change.steps[task.step_id]
    if occupies(task) and step.is_active and class_of_service == ClassOfService.EXPEDITE:
        previous, task.class_of_service = task.class_of_service, class_of_service
        allowance = ExpediteAllowance.of(change, Entry(step, task, None, False))  # an entry into the class
        task.class_of_service = previous
        if allowance.full:  # counted before the change
            raise allowance.refusal(step)
    change.occupancy.leave(task, step)
    task.class_of_service = class_of_service
    change.occupancy.enter(task, step)
    change.record.event(task, EventKind.CLASSIFIED, to_step=step, action="classify", class_of_service=class_of_service)


@board_transaction
def task_bulk_move(*, task_ids: list, to_step: WorkflowStep, actor) -> list[Admission]:
    with board_change(to_step.workflow_id, actor=actor) as change:
        target = change.board.step(to_step.pk)
        locked = {
            t.pk: t
            for t in Task.objects.select_for_update().filter(pk__in=task_ids, workflow=change.workflow).order_by("pk")
        }
        missing = [str(i) for i in dict.fromkeys(task_ids) if i not in locked]
        if missing:
            raise Invalid({"task_ids": [f"Not tasks of this workflow: {', '.join(missing)}."]})
        return bulk_move(change, [locked[i] for i in dict.fromkeys(task_ids)], target)


def bulk_move(change: BoardChange, tasks: list[Task], target: WorkflowStep) -> list[Admission]:
    """All-or-nothing into a rejecting step; into a queue-mode step, admit what fits and queue
    the rest, in the given order. Tasks must be locked and live."""
    if any(t.archived_at is not None for t in tasks):
        raise Conflict("Archived tasks cannot be moved; restore them first.", code="task_archived")
    movers = [t for t in tasks if t.step_id != target.pk]
    counting = sum(1 for t in movers if not t.is_ephemeral)
    step_counts = change.occupancy.step(target)
    room = max(target.wip_limit - step_counts.occupied, 0) if target.is_limited else counting
    if counting > room and target.on_full != OnFull.QUEUE:
        limit = StepLimit(target.pk, target.name, target.wip_limit, step_counts.occupied)
        raise limit.refusal(
            target,
            detail=f'Step "{target.name}" has room for {room} of the {counting} tasks '
            f"(WIP limit {target.wip_limit}, {step_counts.occupied} occupied).",
        )
    results = []
    for task in movers:  # the group's and the assignees' limits, task by task: all or nothing
        source = change.steps[task.step_id]
        outcome = decide(change, target, task, source=source)
        leave(change, task)
        enter(change, task, target, outcome)
        change.record.event(
            task, event_kind(outcome, EventKind.MOVED), from_step=source, to_step=target, action="bulk_move"
        )
        results.append(Admission(task, outcome))
    save_entered(movers, target, change.now)
    if movers:
        change.record.announce("task.moved", task=movers[0])
    for admission in results:
        after_admission(change, admission.task, admission.outcome)
    return results


@board_transaction
def task_archive(*, task: Task, actor) -> Task:
    with task_change(task, actor=actor) as (change, task):
        if task.archived_at is not None:
            return task
        step = change.steps[task.step_id]
        leave(change, task)
        task.archived_at = task.updated_at = change.now
        task.save(update_fields=["archived_at", "updated_at"])
        change.record.event(task, EventKind.ARCHIVED, from_step=step, action="archive")
        task_retired.send(sender=Task, change=change, task=task)
        change.record.announce("task.archived", task=task)
        return task


@board_transaction
def task_restore(*, task: Task, actor, force: bool = False, reason: str = "") -> Admission:
    """Restore from the archive: an admission into the step the task was archived from."""
    check_force(workflow=task.workflow, actor=actor, force=force, reason=reason)
    with task_change(task, actor=actor) as (change, task):
        step = change.steps[task.step_id]
        if task.archived_at is None:
            return Admission(task, Outcome.ADMITTED if task.admitted else Outcome.QUEUED)
        check_external_ref(change, task.external_ref)
        task.archived_at = None
        outcome = decide(change, step, task, force=force)
        enter(change, task, step, outcome)
        task.save(update_fields=["archived_at", *ENTERED_FIELDS])
        change.record.event(
            task, event_kind(outcome, EventKind.RESTORED), to_step=step, reason=reason, action="restore"
        )
        change.record.announce("task.restored", task=task)
        after_admission(change, task, outcome)
        return Admission(task, outcome)


@board_transaction
def task_make_permanent(*, task: Task, actor, force: bool = False, reason: str = "") -> Admission:
    """An ephemeral task starts to count: an admission into its own step."""
    check_force(workflow=task.workflow, actor=actor, force=force, reason=reason)
    with task_change(task, actor=actor) as (change, task):
        if not task.is_ephemeral:
            return Admission(task, Outcome.ADMITTED if task.admitted else Outcome.QUEUED)
        if task.archived_at is not None:
            raise Conflict("An archived task cannot be made permanent; restore it first.", code="task_archived")
        step = change.steps[task.step_id]
        task.is_ephemeral = False
        outcome = decide(change, step, task, force=force)
        enter(change, task, step, outcome, position=task.position)
        task.save(update_fields=["is_ephemeral", *ENTERED_FIELDS])
        kind = event_kind(outcome, EventKind.MOVED)
        change.record.event(task, kind, from_step=step, to_step=step, reason=reason, action="make_permanent")
        change.record.announce("task.updated", task=task)
        after_admission(change, task, outcome)
        return Admission(task, outcome)


@board_transaction
def task_delete(*, task: Task, actor) -> None:
    with task_change(task, actor=actor) as (change, task):
        step = change.steps[task.step_id]
        leave(change, task)
        change.record.event(task, EventKind.DELETED, from_step=step, action="delete", title=task.title)
        dependencies.forget(change, task)
        task_retired.send(sender=Task, change=change, task=task)
        change.record.deleted.add(task.pk)
        change.record.announce("task.deleted", task=task)
        task.delete()
