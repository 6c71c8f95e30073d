"""Reads of the board. Kept out of transactions (SQLite serializes write transactions)."""

from django.db.models import Count, Q

from boards.models import LIVE, Priority, Task, TaskEvent
from workflows.models import Workflow, WorkflowStep

TASK_FIELDS = (
    "id", "workflow_id", "step_id", "title", "description", "priority", "position", "admitted",
    "queued_at", "archived_at", "is_ephemeral", "external_ref", "created_at", "updated_at",
    "entered_step_at",
)
BOARD_TASK_FIELDS = (
    "id", "step_id", "title", "priority", "position", "admitted", "queued_at", "is_ephemeral",
    "external_ref", "created_at", "entered_step_at",
)
PRIORITY_NAMES = {p.value: p.label for p in Priority}


def _iso(value):
    return value.isoformat() if value is not None else None


def task_data(task: Task) -> dict:
    """A task as the API and live messages show it: plain JSON values only."""
    return {
        "id": str(task.pk),
        "workflow_id": str(task.workflow_id),
        "step_id": str(task.step_id),
        "title": task.title,
        "description": task.description,
        "priority": PRIORITY_NAMES[task.priority],
        "position": task.position,
        "admitted": task.admitted,
        "queued_at": _iso(task.queued_at),
        "archived_at": _iso(task.archived_at),
        "is_ephemeral": task.is_ephemeral,
        "external_ref": task.external_ref,
        "created_at": _iso(task.created_at),
        "updated_at": _iso(task.updated_at),
        "entered_step_at": _iso(task.entered_step_at),
    }


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


def step_state(step: WorkflowStep, occupied: int, queued: int) -> dict:
    return {
        "id": str(step.pk),
        "occupied": occupied,
        "queued": queued,
        "wip_limit": step.wip_limit,
        "over_limit": step.is_limited and occupied > step.wip_limit,
    }


def committed_version(workflow_id) -> int:
    """The version this transaction writes, read back from its own row: the message must
    carry exactly the version the board has after the commit."""
    return Workflow.objects.filter(pk=workflow_id).values_list("version", flat=True).get()


def change_message(change) -> dict:
    """The live message for one committed board change (api.md, WebSocket)."""
    message = dict(change.message or {"type": "workflow.updated"})
    primary = message.pop("task", None)
    if primary is not None:
        message["task"] = (
            {"id": str(primary.pk), "step_id": str(primary.step_id)}
            if primary.pk in change.deleted
            else task_data(primary)
        )
    counts = step_counts(change.touched)
    message.update(
        version=committed_version(change.workflow.pk),
        tasks=[task_data(t) for pk, t in change.changed_tasks.items() if pk not in change.deleted],
        deleted_task_ids=[str(pk) for pk in change.deleted],
        steps=[step_state(change.steps[pk], *counts[pk]) for pk in change.touched if pk in change.steps],
    )
    if change.orders:
        message["orders"] = {str(pk): ids for pk, ids in change.orders.items()}
    return message


def step_data(step: WorkflowStep, occupied: int, queued: int) -> dict:
    return {
        "id": str(step.pk),
        "workflow_id": str(step.workflow_id),
        "name": step.name,
        "position": step.position,
        "color": step.color,
        "is_start_step": step.is_start_step,
        "wip_limit": step.wip_limit,
        "pull_from_step_id": str(step.pull_from_step_id) if step.pull_from_step_id else None,
        "on_full": step.on_full,
        "events": step.events,
        **{k: v for k, v in step_state(step, occupied, queued).items() if k != "id" and k != "wip_limit"},
    }


def board_snapshot(*, workflow) -> dict:
    """The whole board in three queries, whatever the number of tasks."""
    steps = list(WorkflowStep.objects.filter(workflow=workflow).order_by("position"))
    rows = (
        Task.objects.filter(workflow=workflow, archived_at__isnull=True)
        .in_board_order()
        .values_list(*BOARD_TASK_FIELDS)
    )
    by_step = {step.pk: [] for step in steps}
    occupied = dict.fromkeys(by_step, 0)
    queued = dict.fromkeys(by_step, 0)
    for (pk, step_id, title, priority, position, admitted, queued_at, ephemeral, ref, created, entered) in rows:
        if not ephemeral:
            if admitted:
                occupied[step_id] += 1
            else:
                queued[step_id] += 1
        by_step[step_id].append({
            "id": str(pk),
            "title": title,
            "priority": PRIORITY_NAMES[priority],
            "position": position,
            "admitted": admitted,
            "queued_at": _iso(queued_at),
            "is_ephemeral": ephemeral,
            "external_ref": ref,
            "created_at": _iso(created),
            "entered_step_at": _iso(entered),
        })
    return {
        "workflow": {
            "id": str(workflow.pk),
            "workspace_id": str(workflow.workspace_id),
            "name": workflow.name,
            "description": workflow.description,
            "version": workflow.version,
        },
        "steps": [
            {**step_data(step, occupied[step.pk], queued[step.pk]), "tasks": by_step[step.pk]}
            for step in steps
        ],
    }


def board_events(*, workflow):
    return TaskEvent.objects.filter(workflow=workflow).select_related("actor")
