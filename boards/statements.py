"""The board's hand-written SQL: the statements every create and move runs, written once from
the models' metadata (common/sql.py says why: the ORM's compiler cost more CPU than the
admission, docs/benchmarks.md). Everything else in boards/ uses the ORM."""

import functools

from django.db import connection

from boards.models import LIVE, OCCUPYING, QUEUED, Task
from common import sql
from workflows.models import Lane, LaneCell, Workflow, WorkflowStep


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
        # Step 1 of the lock order and the version bump in one round trip.
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
        # The board's lanes and cells, read under the workflow lock that orders their changes.
        "lanes": (
            f"SELECT {sql.columns(Lane)} FROM {sql.table(Lane)} WHERE {sql.column(Lane, 'workflow')} = %s"
            f" ORDER BY {sql.column(Lane, 'position')}, {sql.column(Lane, 'created_at')}, {sql.column(Lane, 'id')}"
        ),
        "cells": (
            f"SELECT {sql.columns(LaneCell, 'c')} FROM {sql.table(LaneCell)} c"
            f" JOIN {sql.table(Lane)} l ON l.{sql.column(Lane, 'id')} = c.{sql.column(LaneCell, 'lane')}"
            f" WHERE l.{sql.column(Lane, 'workflow')} = %s"
        ),
        # Occupancy after the locks: every cell (step × lane) of the board at once, sent with the locks.
        "count_board": (
            f"SELECT {sql.column(Task, 'step')}, {sql.column(Task, 'lane')}, {counted} FROM {sql.table(Task)}"
            f" WHERE {sql.column(Task, 'workflow')} = %s AND {live}"
            f" GROUP BY {sql.column(Task, 'step')}, {sql.column(Task, 'lane')}"
        ),
        # One step's, per lane: for a read's view of the board, or a step made in this change
        # (the partial index task_in_board_order).
        "count_step": (
            f"SELECT {sql.column(Task, 'lane')}, {counted} FROM {sql.table(Task)}"
            f" WHERE {sql.column(Task, 'step')} = %s AND {live} GROUP BY {sql.column(Task, 'lane')}"
        ),
    }


def lock_links(workspace_id) -> None:
    """The workspace's link guard: every new link of a workspace is judged (no cycle) after
    it, one at a time. A transaction-scoped advisory lock on PostgreSQL, taken after the
    dependent's board and steps and before any task row (boards/dependencies.py); SQLite's
    write lock already serializes every writer."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"kandev.links.{workspace_id}"])
