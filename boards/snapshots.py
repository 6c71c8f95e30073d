"""The board snapshot (the whole board as of a version) and the per-process cache of it."""

import threading

from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from boards.messages import PRIORITY_NAMES, groups_data, iso, step_data
from boards.models import LIVE, Task
from boards.waiting import board_waiting
from workflows.models import StepGroup, WorkflowStep

BOARD_TASK_FIELDS = (
    "id",
    "step_id",
    "title",
    "priority",
    "position",
    "admitted",
    "queued_at",
    "is_ephemeral",
    "external_ref",
    "blocked_reason",
    "blocked_at",
    "assignee_id",
    "class_of_service",
    "created_at",
    "entered_step_at",
)
_snapshots: dict = {}  # (workflow id, per_step) -> (version, snapshot, tasks in it)
_snapshots_guard = threading.Lock()
SNAPSHOT_TASKS_KEPT = 50_000  # per process; a 20,000-task snapshot holds ~13 MB (tracemalloc)


def board_snapshot(*, workflow, per_step: int | None = None) -> dict:
    """The board as of `workflow.version` (read just before), built once per version.

    Every change bumps the version, so a snapshot built after reading version V shows V or
    later and stays right for everyone who reads V; live messages newer than what it shows
    apply again harmlessly. Viewers arriving together, the REST board and the page share
    one build per process. The result is shared: callers must not change it.
    """
    key = (workflow.pk, per_step)
    cached = _snapshots.get(key)
    if cached is not None and cached[0] == workflow.version:
        return cached[1]
    snapshot = _build_snapshot(workflow=workflow, per_step=per_step)
    tasks = sum(len(step["tasks"]) for step in snapshot["steps"])
    with _snapshots_guard:
        kept = _snapshots.pop(key, None)
        _snapshots[key] = kept if kept and kept[0] > workflow.version else (workflow.version, snapshot, tasks)
        while len(_snapshots) > 1 and sum(entry[2] for entry in _snapshots.values()) > SNAPSHOT_TASKS_KEPT:
            del _snapshots[next(iter(_snapshots))]  # the least recently built
    return snapshot


def _build_snapshot(*, workflow, per_step: int | None) -> dict:
    """The whole board in three queries, whatever the number of tasks.

    With `per_step`, each column carries only its first `per_step` tasks in board order
    and `tasks_total`; the rest of a column is `GET /api/v1/tasks/?step=<id>` ("load
    more"). Counts stay exact (one more query).
    """
    steps = list(WorkflowStep.objects.filter(workflow=workflow).order_by("position"))
    rows = Task.objects.filter(workflow=workflow, archived_at__isnull=True)
    if per_step is not None:
        board_order = [F(name).asc() for name in ("position", "priority", "created_at", "id")]
        rank = Window(RowNumber(), partition_by=[F("step_id")], order_by=board_order)
        rows = rows.annotate(rank_in_step=rank).filter(rank_in_step__lte=per_step)
    rows = rows.in_board_order().values_list(*BOARD_TASK_FIELDS)
    by_step = {step.pk: [] for step in steps}
    occupied = dict.fromkeys(by_step, 0)
    queued = dict.fromkeys(by_step, 0)
    for (
        pk,
        step_id,
        title,
        priority,
        position,
        admitted,
        queued_at,
        ephemeral,
        ref,
        blocked,
        blocked_at,
        assignee_id,
        class_of_service,
        created,
        entered,
    ) in rows:
        if not ephemeral:
            if admitted:
                occupied[step_id] += 1
            else:
                queued[step_id] += 1
        by_step[step_id].append(
            {
                "id": str(pk),
                "title": title,
                "priority": PRIORITY_NAMES[priority],
                "position": position,
                "admitted": admitted,
                "queued_at": iso(queued_at),
                "is_ephemeral": ephemeral,
                "external_ref": ref,
                "blocked_reason": blocked,
                "blocked_at": iso(blocked_at),
                "assignee_id": assignee_id,
                "class_of_service": class_of_service,
                "created_at": iso(created),
                "entered_step_at": iso(entered),
            }
        )
    if per_step is not None:
        totals = _column_totals(by_step)
        for step_id, (_total, step_occupied, step_queued) in totals.items():
            occupied[step_id], queued[step_id] = step_occupied, step_queued
    board = {
        "workflow": {
            "id": str(workflow.pk),
            "workspace_id": str(workflow.workspace_id),
            "name": workflow.name,
            "description": workflow.description,
            "version": workflow.version,
        },
        "steps": [
            {
                **step_data(step, occupied[step.pk], queued[step.pk]),
                "tasks": by_step[step.pk],
                **({"tasks_total": totals[step.pk][0]} if per_step is not None else {}),
            }
            for step in steps
        ],
        "groups": _groups(workflow, steps, occupied),
    }
    board_waiting(board)
    return board


def _groups(workflow, steps: list, occupied: dict) -> list[dict]:
    """The board's step groups (product.md §2b.2); a board without any costs no query."""
    if not any(step.group_id for step in steps):
        return []
    return groups_data(StepGroup.objects.filter(workflow=workflow), steps, occupied)


def _column_totals(by_step: dict) -> dict:
    """{step_id: (tasks shown on the board, occupied, queued)} in one query."""
    rows = (
        Task.objects.filter(step_id__in=list(by_step), archived_at__isnull=True)
        .values("step_id")
        .annotate(
            total=Count("id"),
            occupied=Count("id", filter=LIVE & Q(admitted=True)),
            queued=Count("id", filter=LIVE & Q(admitted=False)),
        )
    )
    totals = dict.fromkeys(by_step, (0, 0, 0))
    totals.update({r["step_id"]: (r["total"], r["occupied"], r["queued"]) for r in rows})
    return totals
