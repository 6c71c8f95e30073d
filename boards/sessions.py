"""Agent sessions as the board shows them (api.md, board response): each card's session and
the board's agent figures. Read from agents' models as data, like the pull's check for a
working agent; every status change stays in agents/services.py."""

import json

from django.db import connection
from django.db.models import Count, FilteredRelation, Q

from agents.models import HOLDING_SLOT, LIVE, SessionStatus
from boards import statements
from common import sql
from workflows.models import Workflow, Workspace


def task_sessions(*, workflow_id, task_ids=None, writes=()) -> dict:
    """{task id: {"id", "status", "queue_position"}} for the board's tasks (or just `task_ids`),
    in one query, whatever the number of tasks.

    A card shows its task's live session, or the last one when it failed in the step the task
    is still in (a person should see that the agent gave up there). `queue_position` is 1-based
    among the workflow's queued sessions in promotion order (queued_at, id), else null.
    `writes` (`common.sql.fetch_together()` writes) are sent ahead of the query, with it.
    """
    # Plain strings: a driver may write an Enum member as its name.
    params = [sql.uuid_param(workflow_id), *(status.value for status in LIVE), SessionStatus.FAILED.value]
    if task_ids is not None:
        ids = [sql.uuid_param(pk) for pk in task_ids]
        params += [ids if connection.vendor == "postgresql" else json.dumps(ids), SessionStatus.QUEUED.value]
    statement = statements.shown_sessions(connection.vendor, of_tasks=task_ids is not None)
    *_, rows = sql.fetch_together(*writes, (statement, params, ()))
    sessions, queued = {}, 0
    for task_id, session_id, status in rows:
        if status == SessionStatus.QUEUED:
            queued += 1
        sessions[sql.uuid_value(task_id)] = {
            "id": str(sql.uuid_value(session_id)),
            "status": status,
            "queue_position": queued if status == SessionStatus.QUEUED else None,
        }
    return sessions


def agent_figures(workflow: Workflow) -> dict:
    """The agent capacity of the board and of its workspace, in one query: sessions holding a
    slot (`running`: starting or running), those waiting for one, and the limits (0 = none)."""
    holding, queued = Q(live__status__in=HOLDING_SLOT), Q(live__status=SessionStatus.QUEUED)
    here = Q(live__workflow_id=workflow.pk)
    live = FilteredRelation("workflows__agent_sessions", condition=Q(workflows__agent_sessions__status__in=LIVE))
    workspace = (
        Workspace.objects.only("max_concurrent_sessions")
        .annotate(live=live)
        .annotate(
            running=Count("live", filter=holding & here),
            queued=Count("live", filter=queued & here),
            workspace_running=Count("live", filter=holding),
            workspace_queued=Count("live", filter=queued),
        )
        .get(pk=workflow.workspace_id)
    )
    return {
        "running": workspace.running,
        "queued": workspace.queued,
        "workflow_limit": workflow.max_parallel_sessions,
        "workspace_limit": workspace.session_limit,
        "workspace_running": workspace.workspace_running,
        "workspace_queued": workspace.workspace_queued,
    }
