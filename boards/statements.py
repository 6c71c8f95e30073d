"""The board's hand-written SQL: the statements every create and move runs, written once from
the models' metadata (common/sql.py says why: the ORM's compiler cost more CPU than the
admission, docs/benchmarks.md). Everything else in boards/ uses the ORM."""

import functools

from django.db import connection

from agents.models import LIVE as LIVE_SESSION
from agents.models import AgentSession
from boards.models import LIVE, OCCUPYING, QUEUED, Task
from common import sql
from workflows.models import Workflow, WorkflowStep


@functools.cache
def locked_section(vendor: str) -> dict:
    """The locked section's statements (boards/locking.py), in the lock order."""
    for_update = " FOR UPDATE" if connection.features.has_select_for_update else ""
    version = sql.column(Workflow, "version")
    live = sql.condition(Task, LIVE)
    # The rules of boards/models.py, compiled: what a step's occupancy and its queue count.
    occupying, queued = sql.condition(Task, OCCUPYING), sql.condition(Task, QUEUED)
    last = sql.column(Task, "position")
    counted = f"COUNT(*) FILTER (WHERE {occupying}), COUNT(*) FILTER (WHERE {queued}), MAX({last})"
    return {
        # Step 1 of the lock order and the version bump in one round trip (admission.md
        # allows "the version bump itself" as the lock).
        "lock_and_bump": (
            f"UPDATE {sql.table(Workflow)} SET {version} = {version} + 1"
            f" WHERE {sql.column(Workflow, 'id')} = %s RETURNING {sql.columns(Workflow)}"
        ),
        # Step 2: every step row of the board, ascending id, one query.
        "lock_steps": (
            f"SELECT {sql.columns(WorkflowStep)} FROM {sql.table(WorkflowStep)}"
            f" WHERE {sql.column(WorkflowStep, 'workflow')} = %s"
            f" ORDER BY {sql.column(WorkflowStep, 'id')}{for_update}"
        ),
        "lock_task": (
            f"SELECT {sql.columns(Task)} FROM {sql.table(Task)}"
            f" WHERE {sql.column(Task, 'id')} = %s AND {sql.column(Task, 'workflow')} = %s{for_update}"
        ),
        # Occupancy after the locks: every step of the board at once, sent with the locks.
        "count_board": (
            f"SELECT {sql.column(Task, 'step')}, {counted} FROM {sql.table(Task)}"
            f" WHERE {sql.column(Task, 'workflow')} = %s AND {live} GROUP BY {sql.column(Task, 'step')}"
        ),
        # One step's: for a read's view of the board, or a step made in this change (the partial
        # index task_in_board_order).
        "count_step": f"SELECT {counted} FROM {sql.table(Task)} WHERE {sql.column(Task, 'step')} = %s AND {live}",
    }


@functools.cache
def shown_sessions(vendor: str, *, of_tasks: bool) -> str:
    """The agent sessions a board shows on its cards (boards/sessions.py says which), in
    promotion order (queued_at, id). Parameters: the workflow id, the live statuses, the
    failed status; with `of_tasks`, then the task ids and the queued status (the whole queue
    comes along). Every live message runs it: hand-written, like the locked section."""
    session, task = sql.table(AgentSession), sql.table(Task)

    def of(name: str, table: str = session) -> str:
        return f"{table}.{sql.column(AgentSession, name)}"

    later = (
        f"SELECT 1 FROM {session} later WHERE {of('task', 'later')} = {of('task')}"
        f" AND ({of('created_at', 'later')} > {of('created_at')}"
        f" OR ({of('created_at', 'later')} = {of('created_at')} AND {of('id', 'later')} > {of('id')}))"
    )
    statement = (
        f"SELECT {of('task')}, {of('id')}, {of('status')} FROM {session}"
        f" JOIN {task} ON {task}.{sql.column(Task, 'id')} = {of('task')}"
        f" WHERE {of('workflow')} = %s AND ({of('status')} IN ({', '.join(['%s'] * len(LIVE_SESSION))})"
        f" OR ({of('status')} = %s"
        f" AND {of('step')} = {task}.{sql.column(Task, 'step')} AND {task}.{sql.column(Task, 'archived_at')} IS NULL"
        f" AND NOT EXISTS ({later})))"
    )
    if of_tasks:
        ids = "= ANY(%s)" if vendor == "postgresql" else "IN (SELECT value FROM json_each(%s))"
        statement += f" AND ({of('task')} {ids} OR {of('status')} = %s)"
    return f"{statement} ORDER BY {of('queued_at')}, {of('id')}"
