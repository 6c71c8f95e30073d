"""Reads of agent sessions, as the API shows them."""

from agents.models import AgentSession


def _iso(value):
    return value.isoformat() if value is not None else None


def session_data(session: AgentSession) -> dict:
    return {
        "id": str(session.pk),
        "task_id": str(session.task_id) if session.task_id else None,
        "workflow_id": str(session.workflow_id),
        "step_id": str(session.step_id) if session.step_id else None,
        "status": session.status,
        "runner": session.runner,
        "queued_at": _iso(session.queued_at),
        "started_at": _iso(session.started_at),
        "finished_at": _iso(session.finished_at),
        "lease_expires_at": _iso(session.lease_expires_at),
        "detail": session.detail,
        "forced": session.forced,
        "reason": session.reason,
    }


def claim_data(session: AgentSession, *, lease_seconds: int) -> dict:
    """A claimed session with everything a runner needs to run it."""
    task, step, workflow = session.task, session.step, session.workflow
    return {
        **session_data(session),
        "lease_seconds": lease_seconds,
        "task": {
            "id": str(task.pk),
            "title": task.title,
            "description": task.description,
            "priority": task.priority_name,
            "external_ref": task.external_ref,
        },
        "step": {"id": str(step.pk), "name": step.name} if step else None,
        "workflow": {
            "id": str(workflow.pk),
            "name": workflow.name,
            "workspace_id": str(workflow.workspace_id),
        },
    }
