"""Task writes that are not admissions: they change a card, never its step."""

from boards.admission import move, reassign, reclassify
from boards.blocker_types import block_detail, type_for_block
from boards.change import BoardChange
from boards.changes import board_change, task_change
from boards.labels import relabel
from boards.locking import board_transaction
from boards.messages import iso
from boards.models import BLOCKED_REASON_MAX, EventKind, Task
from common.errors import Conflict, Invalid


@board_transaction
def task_update(*, task: Task, actor, label_ids=None, **fields) -> Task:
    """Edit a card. A new assignee, class of service or lane (`lane_id`: a move in its step)
    is judged by the limits it touches; new labels and a new due date go in its history."""
    lane_id = fields.pop("lane_id", None)
    with task_change(task, actor=actor) as (change, task):
        if lane_id is not None:
            move(change, task, change.steps[task.step_id], lane_id=lane_id)
        if "assignee_id" in fields:
            reassign(change, task, fields["assignee_id"])
        if "class_of_service" in fields:
            reclassify(change, task, fields["class_of_service"])
        if label_ids is not None:
            relabel(change, task, label_ids)
            fields["label_ids"] = task.label_ids
        if "due_at" in fields and (fields["due_at"], fields["due_all_day"]) != (task.due_at, task.due_all_day):
            change.record.event(task, EventKind.DUE, due_at=iso(fields["due_at"]), due_all_day=fields["due_all_day"])
        for name, value in fields.items():
            setattr(task, name, value)
        task.updated_at = change.now
        task.save(update_fields=[*fields, "updated_at"])
        _changed(change, task)
        return task


def unassign_everywhere(*, workspace_id, user_id, actor=None) -> None:
    """Someone who may no longer hold tasks (removed, or now a viewer) gives up theirs on
    every board of the workspace, each board in its own change. Run after the membership
    change commits, so no new assignment can reach them meanwhile."""
    workflow_ids = (
        Task.objects.filter(assignee_id=user_id, workflow__workspace_id=workspace_id)
        .values_list("workflow_id", flat=True)
        .distinct()
    )
    for workflow_id in workflow_ids:
        unassign_person(workflow_id=workflow_id, user_id=user_id, actor=actor)


@board_transaction
def unassign_person(*, workflow_id, user_id, actor=None) -> None:
    """Unassign a person's tasks on one board, each with an `assigned` event; a task a pull
    skipped for them may be pulled now."""
    with board_change(workflow_id, actor=actor) as change:
        tasks = list(
            Task.objects.select_for_update().filter(workflow=change.workflow, assignee_id=user_id).order_by("pk")
        )
        for task in tasks:
            reassign(change, task, None)
            task.updated_at = change.now
            _changed(change, task)
        Task.objects.filter(pk__in=[t.pk for t in tasks]).update(assignee=None, updated_at=change.now)


@board_transaction
def task_block(*, task: Task, actor, reason: str, blocked_type_id=None) -> Task:
    """Block a task with a reason and, optionally, a type of its workspace (none given: none
    kept); blocking a blocked task replaces both. The task keeps its slot (it still counts
    toward every limit) but is never pulled."""
    reason = (reason or "").strip()
    if not reason:
        raise Invalid({"reason": ["A reason is required to block a task."]})
    if len(reason) > BLOCKED_REASON_MAX:
        raise Invalid({"reason": [f"Ensure this field has no more than {BLOCKED_REASON_MAX} characters."]})
    with task_change(task, actor=actor) as (change, task):
        if task.archived_at is not None:
            raise Conflict("An archived task cannot be blocked; restore it first.", code="task_archived")
        blocked_type = type_for_block(change, blocked_type_id)
        if task.blocked_reason == reason and task.blocked_type_id == (blocked_type and blocked_type.pk):
            return task
        task.blocked_reason = reason
        task.blocked_type = blocked_type
        task.blocked_at = task.blocked_at or change.now  # a new reason does not restart the clock
        task.updated_at = change.now
        task.save(update_fields=["blocked_reason", "blocked_type", "blocked_at", "updated_at"])
        change.record.event(task, EventKind.BLOCKED, reason=reason, action="block", **block_detail(blocked_type))
        _changed(change, task)
        return task


@board_transaction
def task_unblock(*, task: Task, actor) -> Task:
    """Unblock a task: it is pullable again, so the limited steps it feeds fill now."""
    with task_change(task, actor=actor) as (change, task):
        if not task.blocked_reason:
            return task
        reason = task.blocked_reason
        task.blocked_reason, task.blocked_type, task.blocked_at, task.updated_at = "", None, None, change.now
        task.save(update_fields=["blocked_reason", "blocked_type", "blocked_at", "updated_at"])
        change.record.event(task, EventKind.UNBLOCKED, reason=reason, action="unblock")
        _changed(change, task)
        change.worklist.arrived(change.steps[task.step_id])
        return task


def _changed(change: BoardChange, task: Task) -> None:
    change.record.changed(task, change.steps[task.step_id])
    change.record.announce("task.updated", task=task)
