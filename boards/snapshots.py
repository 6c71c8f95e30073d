"""The board snapshot (the whole board as of a version), the per-process cache of it, and
the changes kept in the shared cache that bring a cached snapshot up to date.

A change's live message (boards.messages.change_message) holds every task it changed, whole,
and every step it touched, whole with its counts. So a process holding the board at version
V reads V+1..V+k as the messages of those changes, kept for a while in Django's cache (Redis
when configured, so every server process sees what any of them committed), instead of
reading the whole board again. Whatever it cannot apply exactly sends it back to the
database: a version whose message is not there (yet, or any more), a kind of change the
messages do not fully describe, or too many of them.
"""

import bisect
import logging
import operator
import threading
from dataclasses import dataclass

import orjson
from django.core.cache import cache
from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber

from boards.events import change_key
from boards.messages import CARD_FIELDS, card_data, cell_data, groups_data, label_data, lane_data, step_data
from boards.models import LIVE, Label, Task
from boards.priorities import PRIORITY_RANKS
from boards.sessions import agent_figures, task_sessions
from boards.waiting import Column, board_waiting
from common.db import one_read
from common.metrics import BOARD_SNAPSHOTS
from common.renderers import encode
from workflows.models import Lane, LaneCell, StepGroup, StepKind, WorkflowStep

logger = logging.getLogger(__name__)


@dataclass
class KeptBoard:
    """A board as this process keeps it for every reader of its version: the snapshot, how
    many tasks it holds (what the cache's size counts) and its JSON, once a reader asked."""

    version: int  # the workflow's version its first reader read: it shows that or later
    board: dict
    tasks: int
    encoded: bytes | None = None


# (workflow id, per_step) -> its KeptBoard, the least recently built first.
_boards: dict[tuple, KeptBoard] = {}
# One build, apply or encode of a board at a time per process; the only writer of `_boards`.
# They are CPU under the GIL, so a second one in the same process runs no sooner: it only
# takes turns from the writers holding a board's lock, whose every statement then waits
# longer for the GIL (the mixed load's moves, docs/benchmarks.md). Readers of the same
# version wait for one build, not each make their own.
_one_at_a_time = threading.Lock()
# Per process. A 20,000-task snapshot holds ~13 MB (tracemalloc), its JSON 9 MB.
SNAPSHOT_TASKS_KEPT = 50_000

# Changes whose messages say everything they did to the board. A deleted step, a renamed
# workflow, a label's change (the board's `labels`) or a reconcile are read again; so is
# any message with a part not listed here.
APPLIED_TYPES = frozenset(
    {
        "task.created",
        "task.moved",
        "task.updated",
        "task.archived",
        "task.restored",
        "task.deleted",
        "task.pulled",
        "step.updated",
        "session.updated",
        "group.updated",
        "group.deleted",
    }
)
APPLIED_PARTS = frozenset(
    {
        *("type", "version", "task", "step_id", "tasks", "deleted_task_ids", "steps", "orders", "agents"),
        *("group", "groups", "deleted_group_ids", "lanes", "cells"),
    }
)
CHANGES_APPLIED_AT_MOST = 100  # past that, one build costs less than fetching and applying


def board_snapshot(*, workflow, per_step: int | None = None) -> dict:
    """The board as of `workflow.version` (read just before), made once per version.

    Every change bumps the version, so a snapshot built after reading version V shows V or
    later and stays right for everyone who reads V or earlier; live messages newer than what
    it shows apply again harmlessly. Viewers arriving together, the REST board and the page
    share one snapshot per process, and the whole board's snapshot follows the changes
    (`updated_snapshot`). The result is shared: callers must not change it.
    """
    return _kept_board(workflow, per_step).board


def board_json(*, workflow, per_step: int | None = None) -> tuple[int, bytes]:
    """(version, `board_snapshot()` as JSON), encoded once per snapshot and process: every
    reader of one version (REST reads, each WebSocket viewer that opens the board) shares
    the bytes, where each used to encode megabytes of a large board again."""
    kept = _kept_board(workflow, per_step)
    if kept.encoded is None:
        with _one_at_a_time:
            if kept.encoded is None:  # or encoded meanwhile
                kept.encoded = encode(kept.board)
    return kept.board["workflow"]["version"], kept.encoded


def _kept_board(workflow, per_step: int | None) -> KeptBoard:
    key = (workflow.pk, per_step)
    kept = _kept(key, workflow.version)
    if kept is not None:
        return kept
    with _one_at_a_time:
        kept = _kept(key, workflow.version)  # another reader of this version made it meanwhile
        if kept is not None:
            return kept
        older = _boards.pop(key, None)
        board = None
        if older is not None and per_step is None:  # a column cut at per_step cannot take a task leaving it
            board = updated_snapshot(older.board, version=workflow.version)
        BOARD_SNAPSHOTS.labels(how="built" if board is None else "applied").inc()
        if board is None:
            board = build_snapshot(workflow=workflow, per_step=per_step)
        kept = KeptBoard(workflow.version, board, tasks=sum(len(step["tasks"]) for step in board["steps"]))
        _boards[key] = kept
        while len(_boards) > 1 and sum(entry.tasks for entry in _boards.values()) > SNAPSHOT_TASKS_KEPT:
            del _boards[next(iter(_boards))]  # the least recently built
    return kept


def _kept(key, version: int) -> KeptBoard | None:
    kept = _boards.get(key)
    if kept is None or kept.version < version:
        return None
    BOARD_SNAPSHOTS.labels(how="cached").inc()
    return kept


def updated_snapshot(snapshot: dict, *, version: int) -> dict | None:
    """`snapshot` brought to `version` by the kept changes since its own, as a new snapshot
    (it shares what they left alone); None when they cannot all be applied."""
    workflow_id, since = snapshot["workflow"]["id"], snapshot["workflow"]["version"]
    if version <= since:
        return snapshot
    if version - since > CHANGES_APPLIED_AT_MOST:
        return None
    keys = [change_key(workflow_id, v) for v in range(since + 1, version + 1)]
    try:
        found = cache.get_many(keys)
    except Exception:  # the cache is down: the board is still in the database
        logger.warning("kept board changes unreadable; building board %s", workflow_id, exc_info=True)
        return None
    if len(found) < len(keys):
        return None
    messages = [orjson.loads(found[key]) for key in keys]
    if any(m["type"] not in APPLIED_TYPES or not m.keys() <= APPLIED_PARTS for m in messages):
        return None
    try:
        return _applied(snapshot, messages)
    except Exception:  # the cache only saves a build: a message it cannot take must never fail a read
        logger.warning("board %s: kept changes not applied; building it", workflow_id, exc_info=True)
        return None


_card_id = operator.itemgetter("id")


def board_order(task: dict) -> tuple:
    """A card's place in its column, as `TaskQuerySet.in_board_order` sorts the rows."""
    return task["position"], PRIORITY_RANKS[task["priority"]], task["created_at"], task["id"]


def _applied(snapshot: dict, messages: list[dict]) -> dict | None:
    """Each message, in order, replaces the steps and tasks it carries wholesale: a task
    leaves the column it was in and, unless archived or deleted, takes its place in its step."""
    before = {step["id"]: step for step in snapshot["steps"]}
    steps = dict(before)  # id -> the step's fields (its tasks are in `columns`)
    columns = {step_id: step["tasks"] for step_id, step in before.items()}
    copied = set()  # the columns changed here (new lists; the cached ones stay as they were)
    agents = snapshot["agents"]
    groups = {group["id"]: group for group in snapshot["groups"]}
    lanes = {lane["id"]: lane for lane in snapshot["lanes"]}
    cells = {(cell["lane_id"], cell["step_id"]): cell for cell in snapshot["cells"]}

    def column(step_id) -> list:
        if step_id not in copied:
            columns[step_id] = Column(columns[step_id])
            copied.add(step_id)
        return columns[step_id]

    def take_out(task_id, touched) -> None:
        """The task's card out of its column: first sought in the columns its message touched
        (a moved task's source step is among them), then in every column (a new task's card
        is in none). By `list.index` over the ids: C speed, where an index of the whole board
        built in Python cost more than the rest of a change."""
        for step_id in (*touched, *columns):
            try:
                i = list(map(_card_id, columns.get(step_id, ()))).index(task_id)
            except ValueError:
                continue
            del column(step_id)[i]
            return

    for message in messages:
        touched = [step["id"] for step in message["steps"]]
        for step in message["steps"]:
            steps[step["id"]] = step
            columns.setdefault(step["id"], Column())  # a new step
        for task in message["tasks"]:
            take_out(task["id"], (*touched, task["step_id"]))
            if task["archived_at"] is None:
                if task["step_id"] not in columns:  # a step the messages never showed: build
                    return None
                card = {**card_data(task), "session": task["session"]}
                bisect.insort(column(task["step_id"]), card, key=board_order)
        for task_id in message["deleted_task_ids"]:
            take_out(task_id, touched)
        for step_id, keyed in message.get("orders", {}).items():  # a rebalanced step: every task's new key
            keys = {entry["id"]: entry["position"] for entry in keyed}
            tasks = column(step_id)
            tasks[:] = sorted(({**t, "position": keys.get(t["id"], t["position"])} for t in tasks), key=board_order)
        agents = message.get("agents", agents)
        for group in message.get("groups", []):
            groups[group["id"]] = group
        for group_id in message.get("deleted_group_ids", []):
            groups.pop(group_id, None)
        for lane in message.get("lanes", []):
            lanes[lane["id"]] = lane
        for cell in message.get("cells", []):
            cells[cell["lane_id"], cell["step_id"]] = cell
    if len(lanes) == 1:  # one lane: its figures are its steps' (the messages carry no lanes)
        ((lane_id, lane),) = lanes.items()
        occupied = sum(step["occupied"] for step in steps.values() if step["kind"] == StepKind.ACTIVE)
        lanes[lane_id] = {
            **lane,
            "occupied": occupied,
            "over_limit": bool(lane["wip_limit"]) and occupied > lane["wip_limit"],
        }
        cells = {
            key: {**cell, "occupied": steps[cell["step_id"]]["occupied"]}
            for key, cell in cells.items()
            if cell["step_id"] in steps
        }
    board = {
        **snapshot,
        "workflow": {**snapshot["workflow"], "version": messages[-1]["version"]},
        "agents": agents,
        "lanes": list(lanes.values()),  # a change of the lanes themselves is read again: same order
        "cells": list(cells.values()),
        "groups": sorted(groups.values(), key=lambda g: steps[g["step_ids"][0]]["position"] if g["step_ids"] else -1),
        "steps": [
            step if before.get(step_id) is step and step_id not in copied else {**step, "tasks": columns[step_id]}
            for step_id, step in sorted(steps.items(), key=lambda item: item[1]["position"])
        ],
    }
    set_waiting(board, shared=snapshot)
    return board


def set_waiting(board: dict, *, shared: dict | None = None) -> None:
    """Each card's `waiting`, where it may have changed since `shared`, and each changed
    column's orders. Columns and cards still shared with `shared` are copied before they
    change: readers may be serializing it."""
    waiting = board_waiting(board, unchanged_from=shared)
    old_columns = {id(step["tasks"]) for step in shared["steps"]} if shared is not None else set()
    for index, step in enumerate(board["steps"]):
        if step["id"] not in waiting:
            continue
        column, orders = waiting[step["id"]]
        tasks = step["tasks"]
        if shared is None:  # a board just built: nobody else holds it yet
            for i, card_waiting in column.items():
                tasks[i]["waiting"] = card_waiting
        elif changed := [(i, w) for i, w in column.items() if tasks[i].get("waiting", ()) is not w]:
            if id(tasks) in old_columns:
                tasks = Column(tasks)
                board["steps"][index] = {**step, "tasks": tasks}
            for i, card_waiting in changed:
                tasks[i] = {**tasks[i], "waiting": card_waiting}
        tasks.orders = orders


def build_snapshot(*, workflow, per_step: int | None = None) -> dict:
    """The whole board in six queries, whatever the number of tasks, all reading one state
    of it: read apart, the tasks can name a step made after the steps were read.

    With `per_step`, each column carries only its first `per_step` tasks in board order
    and `tasks_total`; the rest of a column is `GET /api/v1/tasks/?step=<id>` ("load
    more"). Counts stay exact (one more query).
    """
    with one_read():
        board = _read_board(workflow, per_step)
    set_waiting(board)
    return board


def _read_board(workflow, per_step: int | None) -> dict:
    steps = list(WorkflowStep.objects.filter(workflow=workflow).order_by("position"))
    rows = Task.objects.filter(workflow=workflow, archived_at__isnull=True)
    if per_step is not None:
        board_order = [F(name).asc() for name in ("position", "priority", "created_at", "id")]
        rank = Window(RowNumber(), partition_by=[F("step_id")], order_by=board_order)
        rows = rows.annotate(rank_in_step=rank).filter(rank_in_step__lte=per_step)
    rows = rows.in_board_order().values_list("step_id", *CARD_FIELDS)
    sessions = task_sessions(workflow_id=workflow.pk)
    by_step = {step.pk: Column() for step in steps}
    for step_id, *values in rows:
        card = card_data(values)
        card["session"] = sessions.get(values[0]) if sessions else None  # most boards have no agent at work
        by_step[step_id].append(card)
    # Counted from the columns: one lookup by step id per task fewer (a UUID's hash is Python's).
    occupied = {step_id: _counted(tasks, admitted=True) for step_id, tasks in by_step.items()}
    queued = {step_id: _counted(tasks, admitted=False) for step_id, tasks in by_step.items()}
    if per_step is not None:
        totals = _column_totals(by_step)
        for step_id, (_total, step_occupied, step_queued) in totals.items():
            occupied[step_id], queued[step_id] = step_occupied, step_queued
    return {
        "workflow": {
            "id": str(workflow.pk),
            "workspace_id": str(workflow.workspace_id),
            "name": workflow.name,
            "description": workflow.description,
            "version": workflow.version,
            "expedite_limit": workflow.expedite_limit,
        },
        "agents": agent_figures(workflow),
        "steps": [
            {
                **step_data(step, occupied[step.pk], queued[step.pk]),
                "tasks": by_step[step.pk],
                **({"tasks_total": totals[step.pk][0]} if per_step is not None else {}),
            }
            for step in steps
        ],
        "groups": _groups(workflow, steps, occupied),
        # The workspace's labels, which the cards' `label_ids` name, by name.
        "labels": [
            label_data(label) for label in Label.objects.filter(workspace_id=workflow.workspace_id).order_by("name")
        ],
        **_lanes(workflow, steps, by_step, occupied, cut=per_step is not None),
    }


def _counted(tasks: list[dict], *, admitted: bool) -> int:
    return sum(1 for task in tasks if task["admitted"] is admitted and not task["is_ephemeral"])


def _groups(workflow, steps: list, occupied: dict) -> list[dict]:
    """The board's step groups; a board without any costs no query."""
    if not any(step.group_id for step in steps):
        return []
    return groups_data(StepGroup.objects.filter(workflow=workflow), steps, occupied)


def _lanes(workflow, steps: list, by_step: dict, occupied: dict, *, cut: bool) -> dict:
    """The board's `lanes` in board order and its `cells` (those with a limit), each with its
    occupancy: one query for both, and one more to count when the columns are `cut` short.
    With one lane its counts are the steps'; with more, the cards' (a pass over them)."""
    rows = list(
        Lane.objects.filter(workflow=workflow)
        .order_by("position", "created_at", "id")
        .values_list(
            "id", "name", "position", "wip_limit", "is_expedite", "cells__id", "cells__step_id", "cells__wip_limit"
        )
    )
    lanes, cells = {}, []
    for lane_id, name, position, wip_limit, is_expedite, cell_id, step_id, cell_limit in rows:
        lanes.setdefault(
            lane_id,
            Lane(
                pk=lane_id,
                workflow_id=workflow.pk,
                name=name,
                position=position,
                wip_limit=wip_limit,
                is_expedite=is_expedite,
            ),
        )
        if cell_id is not None:
            cells.append(LaneCell(pk=cell_id, lane_id=lane_id, step_id=step_id, wip_limit=cell_limit))
    active = {step.pk for step in steps if step.is_active}
    if len(lanes) == 1:
        counted = {(step_id, lane_id): n for step_id, n in occupied.items() for lane_id in lanes}
    elif cut:
        counted = {
            (row["step_id"], row["lane_id"]): row["n"]
            for row in Task.objects.occupying()
            .filter(workflow=workflow)
            .values("step_id", "lane_id")
            .annotate(n=Count("id"))
        }
    else:
        counted = {}
        for step_id, tasks in by_step.items():
            for task in tasks:
                if task["admitted"] and not task["is_ephemeral"]:
                    key = (step_id, task["lane_id"])
                    counted[key] = counted.get(key, 0) + 1
    key_of = (lambda pk: pk) if len(lanes) == 1 or cut else str
    in_lane = {pk: sum(counted.get((step_id, key_of(pk)), 0) for step_id in active) for pk in lanes}
    return {
        "lanes": [lane_data(lane, in_lane[pk]) for pk, lane in lanes.items()],
        "cells": [cell_data(cell, counted.get((cell.step_id, key_of(cell.lane_id)), 0)) for cell in cells],
    }


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
