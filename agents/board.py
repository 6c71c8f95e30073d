"""Agent sessions as a board shows them: each card's session, the
board's agent figures, and the tasks an agent is working on. Registered with the board
(boards/sessions.py) in AgentsConfig.ready(): boards never reads agents' models. Every status
change stays in agents/services.py."""

import functools
import json

from django.db import connection
from django.db.models import Count, FilteredRelation, Q
from rest_framework import serializers

from agents.models import HOLDING_SLOT, LIVE, AgentSession, SessionStatus
from boards.models import Task
from boards.sessions import Sessions
from common import sql
from workflows.models import Workflow, Workspace


def task_sessions(*, workflow_id, task_ids=None, writes=()) -> dict:
    """{task id: {"id", "status", "queue_position", "waiting_for_runner", "detail"}} for the
    board's tasks (or just `task_ids`),
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
    statement = _shown_sessions(connection.vendor, of_tasks=task_ids is not None)
    *_, rows = sql.fetch_together(*writes, (statement, params, ()))
    sessions, queued = {}, 0
    for task_id, session_id, status, runner, detail in rows:
        if status == SessionStatus.QUEUED:
            queued += 1
        sessions[sql.uuid_value(task_id)] = {
            "id": str(sql.uuid_value(session_id)),
            "status": status,
            "queue_position": queued if status == SessionStatus.QUEUED else None,
            "waiting_for_runner": status == SessionStatus.STARTING and not runner,
            "detail": detail if status == SessionStatus.FAILED else "",
        }
    return sessions


@functools.cache
def _shown_sessions(vendor: str, *, of_tasks: bool) -> str:
    """The agent sessions a board shows on its cards (`task_sessions` says which), in
    promotion order (queued_at, id). Parameters: the workflow id, the live statuses, the
    failed status; with `of_tasks`, then the task ids and the queued status (the whole queue
    comes along). Every live message runs it: hand-written, like the board's locked section
    (boards/statements.py)."""
    session, task = sql.table(AgentSession), sql.table(Task)

    def of(name: str, table: str = session) -> str:
        return f"{table}.{sql.column(AgentSession, name)}"

    later = (
        f"SELECT 1 FROM {session} later WHERE {of('task', 'later')} = {of('task')}"
        f" AND ({of('created_at', 'later')} > {of('created_at')}"
        f" OR ({of('created_at', 'later')} = {of('created_at')} AND {of('id', 'later')} > {of('id')}))"
    )
    statement = (
        f"SELECT {of('task')}, {of('id')}, {of('status')}, {of('runner')}, {of('detail')} FROM {session}"
        f" JOIN {task} ON {task}.{sql.column(Task, 'id')} = {of('task')}"
        f" WHERE {of('workflow')} = %s AND ({of('status')} IN ({', '.join(['%s'] * len(LIVE))})"
        f" OR ({of('status')} = %s"
        f" AND {of('step')} = {task}.{sql.column(Task, 'step')} AND {task}.{sql.column(Task, 'archived_at')} IS NULL"
        f" AND NOT EXISTS ({later})))"
    )
    if of_tasks:
        ids = "= ANY(%s)" if vendor == "postgresql" else "IN (SELECT value FROM json_each(%s))"
        statement += f" AND ({of('task')} {ids} OR {of('status')} = %s)"
    return f"{statement} ORDER BY {of('queued_at')}, {of('id')}"


def agent_figures(workflow: Workflow) -> dict:
    """The agent capacity of the board and of its workspace, in one query: sessions a runner
    holds (`running`: claimed, starting or running), those holding a slot that no runner has
    claimed yet (`unclaimed`), those waiting for a slot (`queued`), and the limits (0 = none),
    which bound running and unclaimed together."""
    holding, queued = Q(live__status__in=HOLDING_SLOT), Q(live__status=SessionStatus.QUEUED)
    unclaimed = Q(live__status=SessionStatus.STARTING, live__runner="")
    claimed = holding & ~unclaimed
    here = Q(live__workflow_id=workflow.pk)
    live = FilteredRelation("workflows__agent_sessions", condition=Q(workflows__agent_sessions__status__in=LIVE))
    workspace = (
        Workspace.objects.only("max_concurrent_sessions")
        .annotate(live=live)
        .annotate(
            running=Count("live", filter=claimed & here),
            unclaimed=Count("live", filter=unclaimed & here),
            queued=Count("live", filter=queued & here),
            workspace_running=Count("live", filter=claimed),
            workspace_unclaimed=Count("live", filter=unclaimed),
            workspace_queued=Count("live", filter=queued),
        )
        .get(pk=workflow.workspace_id)
    )
    return {
        "running": workspace.running,
        "unclaimed": workspace.unclaimed,
        "queued": workspace.queued,
        "workflow_limit": workflow.max_parallel_sessions,
        "workspace_limit": workspace.session_limit,
        "workspace_running": workspace.workspace_running,
        "workspace_unclaimed": workspace.workspace_unclaimed,
        "workspace_queued": workspace.workspace_queued,
    }


class BoardSessionSerializer(serializers.Serializer):
    """The task's live agent session, or its last one when that failed in the task's step."""

    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    queue_position = serializers.IntegerField(allow_null=True, help_text="1-based among the board's queued sessions")
    waiting_for_runner = serializers.BooleanField(help_text="Starting, but no runner has claimed it yet")
    detail = serializers.CharField(help_text="Why it failed (empty unless failed)")


SESSIONS = Sessions(
    task_sessions=task_sessions,
    agent_figures=agent_figures,
    working=Q(agent_sessions__status__in=HOLDING_SLOT),
    working_statuses=frozenset(status.value for status in HOLDING_SLOT),
    serializer=BoardSessionSerializer,
)
