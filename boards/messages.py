"""What a board change looks like to a viewer: tasks and steps as plain JSON values, and
the live message of one committed change (api.md, WebSocket)."""

from agents.models import SessionStatus
from boards.models import Priority, Task
from boards.sessions import agent_figures, task_sessions
from workflows.models import WorkflowStep

PRIORITY_NAMES = {p.value: p.label for p in Priority}


def iso(value):
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
        "queued_at": iso(task.queued_at),
        "archived_at": iso(task.archived_at),
        "is_ephemeral": task.is_ephemeral,
        "external_ref": task.external_ref,
        "blocked_reason": task.blocked_reason,
        "blocked_at": iso(task.blocked_at),
        "assignee_id": task.assignee_id,
        "class_of_service": task.class_of_service,
        "created_at": iso(task.created_at),
        "updated_at": iso(task.updated_at),
        "entered_step_at": iso(task.entered_step_at),
    }


def change_message(change) -> dict:
    """The live message for one committed board change (api.md, WebSocket). Each `steps[]`
    entry is the whole step as `GET /api/v1/steps/{id}/` shows it, and each task carries its
    `session` as the board shows it, so viewers never refetch."""
    message = dict(change.message or {"type": "workflow.updated"})
    tasks = {pk: t for pk, t in change.changed_tasks.items() if pk not in change.deleted}
    wanted = tasks.keys() | (change.session_tasks - change.deleted)
    # A task created in this change has no session but one the change started: creates,
    # the busiest writes, need not look.
    unknown = wanted - (change.created - change.session_tasks)
    sessions = task_sessions(workflow_id=change.workflow.pk, task_ids=wanted) if unknown or change.agents else {}
    if change.agents:  # the queue may have moved: every queued task goes along with its position
        wanted |= {pk for pk, session in sessions.items() if session["status"] == SessionStatus.QUEUED}
    unread = wanted - tasks.keys()
    if unread:  # tasks whose session changed while the change wrote nothing else of them
        tasks.update((t.pk, t) for t in Task.objects.filter(pk__in=unread, workflow_id=change.workflow.pk))
    primary = message.pop("task", None)
    if primary is not None:
        message["task"] = (
            {"id": str(primary.pk), "step_id": str(primary.step_id)}
            if primary.pk in change.deleted
            else {**task_data(primary), "session": sessions.get(primary.pk)}
        )
    counts = change.touched_counts()
    message.update(
        version=change.version,
        tasks=[{**task_data(t), "session": sessions.get(pk)} for pk, t in tasks.items()],
        deleted_task_ids=[str(pk) for pk in change.deleted],
        steps=[step_data(change.steps[pk], *counts[pk]) for pk in change.touched if pk in change.steps],
    )
    if change.agents:
        message["agents"] = agent_figures(change.workflow)
    if change.orders:
        message["orders"] = {str(pk): keys for pk, keys in change.orders.items()}
    return message


def step_data(step: WorkflowStep, occupied: int, queued: int) -> dict:
    return {
        "id": str(step.pk),
        "workflow_id": str(step.workflow_id),
        "name": step.name,
        "position": step.position,
        "color": step.color,
        "kind": step.kind,
        "is_start_step": step.is_start_step,
        "wip_limit": step.wip_limit,
        "pull_from_step_id": str(step.pull_from_step_id) if step.pull_from_step_id else None,
        "on_full": step.on_full,
        "events": step.events,
        "occupied": occupied,
        "queued": queued,
        "over_limit": step.is_limited and occupied > step.wip_limit,
    }
