"""The board's commit point and its lock order.

Every change to a board runs inside `board_change()` (changes.py), within an outermost
`@board_transaction`; `lock_board()` takes, in this order:
  1. the workflow row (orders all changes of one board), locked by bumping its version,
  2. every step row of the board, ascending id, in one query,
  3. the task rows it changes (`LockedBoard.lock_task`),
  4. the membership rows of the assignees whose personal limits it judges (ascending id,
     `Occupancy.lock_members`): a person's limit spans boards, so two boards serialize there.
Session rows and the workspace's session guard, when a change needs them, come after.
Groups, lanes and cells live inside one board: the workflow lock orders their changes (no lock
of their own). Steps 1 to 3 (the task when the change is about one), the lanes and cells, and
then every cell's counts go as one query (`lock_board`).
"""

import functools
import logging
import random
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import F

from boards import statements
from boards.models import Task
from common import sql
from common.errors import Invalid, KandevError
from workflows.models import Lane, LaneCell, StepGroup, Workflow, WorkflowStep

logger = logging.getLogger(__name__)


class NotFound(KandevError):
    status_code = 404
    code = "not_found"


def _is_retryable(exc: OperationalError) -> bool:
    cause = exc.__cause__
    name = type(cause).__name__ if cause is not None else ""
    return name in {"DeadlockDetected", "SerializationFailure"} or "database is locked" in str(exc)


def board_transaction(fn):
    """Outermost service: one durable transaction, retried on deadlock/serialization failure.

    A retried call re-reads everything after taking its locks, so repeating it is safe.
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        attempts = settings.KANDEV_ADMISSION_RETRIES
        for attempt in range(1, attempts + 1):
            try:
                with transaction.atomic(durable=True):
                    return fn(*args, **kwargs)
            except OperationalError as exc:
                if attempt == attempts or not _is_retryable(exc):
                    raise
                logger.warning("retrying %s after %s (attempt %d)", fn.__name__, exc, attempt)
                time.sleep(random.uniform(0, 0.01 * 2**attempt))
        raise AssertionError("unreachable")

    return wrapper


@dataclass
class LockedBoard:
    """A board as its change holds it: the workflow row and its steps (locked, unless
    `read_only`), its lanes and cells (read with the lock), its groups when asked for, and
    the task rows the change locked."""

    workflow: Workflow
    steps: dict  # step id -> WorkflowStep
    read_only: bool = False  # a read's view of the board (`board_view`): nothing is locked
    _groups: dict | None = None
    _lanes: dict | None = None  # lane id -> Lane, in board order
    _cells: dict | None = None  # (lane id, step id) -> LaneCell
    _tasks: dict = field(default_factory=dict)  # task id -> its row locked by lock_board(), or None

    @property
    def version(self) -> int:
        """The board's version after this change (bumped when the lock was taken)."""
        return self.workflow.version

    def step(self, step_id) -> WorkflowStep:
        """A step of this board, or a 400 naming the field."""
        step = self.steps.get(step_id)
        if step is None:
            raise Invalid({"step_id": ["No such step in this workflow."]})
        return step

    def start_step(self) -> WorkflowStep:
        for step in self.steps.values():
            if step.is_start_step:
                return step
        ordered = sorted(self.steps.values(), key=lambda s: s.position)
        if not ordered:
            raise Invalid({"step_id": ["This workflow has no steps."]})
        return ordered[0]

    def group(self, step: WorkflowStep) -> StepGroup | None:
        """The step's group (read after the workflow lock, which orders every group change)."""
        if step.group_id is None:
            return None
        if self._groups is None:
            self._groups = {g.pk: g for g in StepGroup.objects.filter(workflow=self.workflow)}
        return self._groups.get(step.group_id)

    @property
    def lanes(self) -> dict:
        """{lane id: Lane} in board order (a read's view reads them when first asked)."""
        if self._lanes is None:
            self._lanes = {lane.pk: lane for lane in Lane.objects.filter(workflow=self.workflow)}
        return self._lanes

    @property
    def cells(self) -> dict:
        """{(lane id, step id): LaneCell}: the cells that have a limit."""
        if self._cells is None:
            self._cells = {(c.lane_id, c.step_id): c for c in LaneCell.objects.filter(lane__workflow=self.workflow)}
        return self._cells

    def lane(self, lane_id, field: str = "lane_id") -> Lane:
        """A lane of this board, or a 400 naming the field."""
        lane = self.lanes.get(lane_id)
        if lane is None:
            raise Invalid({field: ["No such lane in this workflow."]})
        return lane

    def first_lane(self) -> Lane:
        """Where a task goes when no lane is named: the first lane that is not the expedite
        lane (shown on top, it is chosen on purpose), unless the board has no other."""
        lanes = list(self.lanes.values())
        return next((lane for lane in lanes if not lane.is_expedite), lanes[0])

    def cell(self, lane_id, step_id) -> LaneCell | None:
        return self.cells.get((lane_id, step_id))

    def group_steps(self, group: StepGroup) -> list[WorkflowStep]:
        return sorted((s for s in self.steps.values() if s.group_id == group.pk), key=lambda s: s.position)

    def limited(self, step: WorkflowStep) -> bool:
        """Limited by its own WIP limit or by its group's: such a step fills itself."""
        return step.is_limited or step.group_id is not None

    def consumers(self, feeder: WorkflowStep) -> list[WorkflowStep]:
        """The limited steps that pull from `feeder`."""
        return [s for s in self.steps.values() if s.pull_from_step_id == feeder.pk and self.limited(s)]

    def lock_task(self, task_id) -> Task:
        """Step 3 of the lock order: a task row of this board (read with the board's lock
        when the change was opened for it)."""
        if task_id in self._tasks:
            task = self._tasks[task_id]
        else:
            statement = statements.locked_section(connection.vendor)["lock_task"]
            rows = sql.fetch(statement, [sql.uuid_param(task_id), sql.uuid_param(self.workflow.pk)], Task)
            task = rows[0][0] if rows else None
        if task is None:
            raise NotFound("Not found.")
        return task


def lock_board(workflow_id, *, task_id=None) -> tuple[LockedBoard, list]:
    """Steps 1 to 3 of the lock order (the board, its version bumped; its steps; the task
    `task_id`, when the change is about one) and then every step's counts, sent together:
    on PostgreSQL one round trip, for statements that each wait for the one before.
    Every write of the board waits for this lock, so each round trip held under it is
    paid by the writers queued behind (docs/benchmarks.md). Returns the board and the
    count rows (step id, lane id, occupied, queued, last position) for its occupancy ledger."""
    locked = statements.locked_section(connection.vendor)
    board = sql.uuid_param(workflow_id)
    queries = [(locked["lock_and_bump"], [board], [Workflow]), (locked["lock_steps"], [board], [WorkflowStep])]
    if task_id is not None:
        queries.append((locked["lock_task"], [sql.uuid_param(task_id), board], [Task]))
    queries += [(locked["lanes"], [board], [Lane]), (locked["cells"], [board], [LaneCell])]
    queries.append((locked["count_board"], [board], []))
    bumped, steps, *task_rows, lanes, cells, counted = sql.fetch_together(*queries)
    if not bumped:
        raise NotFound("Not found.")
    ((workflow,),) = bumped
    locked_board = LockedBoard(workflow=workflow, steps={step.pk: step for (step,) in steps})
    locked_board._lanes = {lane.pk: lane for (lane,) in lanes}
    locked_board._cells = {(cell.lane_id, cell.step_id): cell for (cell,) in cells}
    for rows in task_rows:  # the one task's, when asked for
        locked_board._tasks[task_id] = rows[0][0] if rows else None
    return locked_board, counted


def take_back_bump(board: LockedBoard) -> None:
    """A change that changed nothing takes its version bump back (still under the lock, so
    nobody saw it)."""
    Workflow.objects.filter(pk=board.workflow.pk).update(version=F("version") - 1)
    board.workflow.version -= 1
