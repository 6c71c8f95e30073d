"""The occupancy ledger of a locked board: what every limit counts.

Counts are read after the locks (the steps' with the lock itself, a person's after their
membership row's lock, the board's expedite work when first asked), then kept current by
`enter()` and `leave()` alone: every door, fill and promotion that puts a task somewhere
or takes it away tells the ledger, which judges from the task itself whether it counts
(`is_live()`, `admitted`) and where (its step, its cell: the step in its lane, its group, its
lane in an active step, its assignee in an active step, the board's expedite work). Nothing
else changes a count.

The ledger also says what its counts did since last asked (`changes()`): a step or cell
holding fewer tasks may fill, one holding more offers its consumers a pull, a lane or a
person with fewer tasks may take work a pull skipped for them. The change's worklist asks
(worklist.py).
"""

from dataclasses import dataclass

from django.db import connection
from django.db.models import Count, Max

from boards import statements
from boards.locking import LockedBoard
from boards.models import NOT_ASSIGNABLE, ClassOfService, Task, is_live
from boards.selectors import step_counts
from common import sql
from common.errors import Invalid
from workflows.models import Lane, Membership, Role, StepGroup, StepKind, WorkflowStep


@dataclass
class StepCount:
    occupied: int
    queued: int
    end: int | None  # the last live key, or above it; -1: no live task; None: re-read


@dataclass
class Person:
    """An assignee's personal limit and their live admitted tasks in active steps of every
    board of the workspace, read after their membership row's lock."""

    user_id: int
    username: str
    role: str
    limit: int  # 0: no personal limit
    occupied: int


class Occupancy:
    """Counts per step (occupied, queued), per cell (a step's occupied tasks of one lane),
    per group (the sum of its steps'), per lane (the sum of its cells in active steps), per
    person and of the board's expedite work; `enter()` and `leave()` are their only writers."""

    def __init__(self, board: LockedBoard, counted=None):
        self.board = board
        self.steps: dict = {}  # step id -> StepCount
        self.cells: dict = {}  # (step id, lane id) -> occupied, for the steps in `steps`
        if counted is not None:  # the rows read with the lock: every cell of the board
            self.steps = {pk: StepCount(0, 0, -1) for pk in board.steps}
            self._counted(counted, step_id=None)
        self.persons: dict = {}  # user id -> Person, once locked
        self.expedite: int | None = None  # read when first asked
        self.seen = {pk: c.occupied for pk, c in self.steps.items()}  # counts when changes() last looked
        self.seen_cells = dict(self.cells)
        self.seen_persons: dict = {}

    def _counted(self, rows, step_id) -> None:
        """Take in count rows ([step id,] lane id, occupied, queued, last position) of a
        board (`step_id` None) or of one step, per cell."""
        for row in rows:
            pk = sql.uuid_value(row[0]) if step_id is None else step_id
            lane_id, occupied, queued, last = row[-4:]
            lane_id = sql.uuid_value(lane_id)
            count = self.steps.setdefault(pk, StepCount(0, 0, -1))
            count.occupied += occupied
            count.queued += queued
            if last is not None:
                count.end = max(count.end, last)
            if occupied:
                self.cells[pk, lane_id] = occupied

    # --- reads ------------------------------------------------------------------------

    def step(self, step: WorkflowStep) -> StepCount:
        """Read with the locks (a read's view, or a step made in this change: when first asked)."""
        if step.pk not in self.steps:
            rows = sql.fetch(statements.locked_section(connection.vendor)["count_step"], [sql.uuid_param(step.pk)])
            self.steps[step.pk] = StepCount(0, 0, -1)
            self._counted(rows, step_id=step.pk)
            self.seen[step.pk] = self.steps[step.pk].occupied
            self.seen_cells.update({key: n for key, n in self.cells.items() if key[0] == step.pk})
        return self.steps[step.pk]

    def cell(self, step: WorkflowStep, lane_id) -> int:
        """The lane's live admitted tasks in `step`."""
        self.step(step)
        return self.cells.get((step.pk, lane_id), 0)

    def lane(self, lane: Lane) -> int:
        """The lane's live admitted tasks in the board's active steps."""
        return sum(self.cell(s, lane.pk) for s in self.board.steps.values() if s.is_active)

    def group(self, group: StepGroup) -> int:
        return sum(self.step(s).occupied for s in self.board.group_steps(group))

    def person(self, user_id) -> Person | None:
        self.lock_members([user_id])
        return self.persons.get(user_id)

    def lock_members(self, user_ids) -> None:
        """Step 4 of the lock order: the membership rows of these assignees, ascending id, and
        their occupancy counted after the lock. Users already locked by this change are kept."""
        missing = set(user_ids) - self.persons.keys() - {None}
        if not missing:
            return
        workspace_id = self.board.workflow.workspace_id
        memberships = Membership.objects if self.board.read_only else Membership.objects.select_for_update(of=("self",))
        rows = list(
            memberships.filter(workspace_id=workspace_id, user_id__in=missing)
            .order_by("id")
            .values_list("user_id", "user__username", "role", "wip_limit")
        )
        limited = [user_id for user_id, _, _, limit in rows if limit]
        occupied = dict(
            Task.objects.occupying()
            .filter(assignee_id__in=limited, step__kind=StepKind.ACTIVE, workflow__workspace_id=workspace_id)
            .values("assignee_id")
            .annotate(n=Count("id"))
            .values_list("assignee_id", "n")
            if limited
            else {}
        )
        for user_id, username, role, limit in rows:
            self.persons[user_id] = Person(user_id, username, role, limit, occupied.get(user_id, 0))
            self.seen_persons[user_id] = self.persons[user_id].occupied

    def assignable(self, user_id) -> Person:
        """The person a task may be assigned to: a member or owner of the workspace."""
        person = self.person(user_id)
        if person is None or person.role not in (Role.OWNER, Role.MEMBER):
            raise Invalid({"assignee_id": [NOT_ASSIGNABLE]})
        return person

    def expedited(self) -> int:
        """Live admitted expedite tasks in active steps of this board."""
        if self.expedite is None:
            self.expedite = (
                Task.objects.occupying()
                .filter(
                    workflow=self.board.workflow, class_of_service=ClassOfService.EXPEDITE, step__kind=StepKind.ACTIVE
                )
                .count()
            )
        return self.expedite

    def end(self, step: WorkflowStep) -> int:
        """The step's last live key, or above it (-1: none): a task entering last goes after it."""
        count = self.step(step)
        if count.end is None:
            last = Task.objects.live().filter(step=step).aggregate(last=Max("position"))["last"]
            count.end = -1 if last is None else last
        return count.end

    def extend_end(self, step: WorkflowStep, position: int) -> None:
        """A key was given in `step`: its end is at least there."""
        count = self.step(step)
        if count.end is not None:
            count.end = max(count.end, position)

    def counts_of(self, step_ids) -> dict:
        """{step_id: (occupied, queued)} of these steps, for the live message: the ones this
        change read are current; the others (a renamed step, say) cost one query for all."""
        known = {pk: (self.steps[pk].occupied, self.steps[pk].queued) for pk in step_ids if pk in self.steps}
        missing = set(step_ids) - known.keys()
        return known | (step_counts(missing) if missing else {})

    # --- the writers ------------------------------------------------------------------

    def enter(self, task: Task, step: WorkflowStep) -> None:
        """`task`, as it now stands, is in `step`: count it there if it counts."""
        self._count(task, step, +1)

    def leave(self, task: Task, step: WorkflowStep) -> None:
        """`task`, as it stood, is no longer in `step`."""
        if is_live(task):
            count = self.step(step)
            if count.end is not None and task.position >= count.end:
                count.end = None  # the step's end moved; re-read when next needed
        self._count(task, step, -1)

    def _count(self, task: Task, step: WorkflowStep, delta: int) -> None:
        if not is_live(task):
            return
        count = self.step(step)
        if not task.admitted:
            count.queued += delta
            return
        count.occupied += delta
        cell = (step.pk, task.lane_id)
        self.cells[cell] = self.cells.get(cell, 0) + delta
        if not step.is_active:
            return
        if task.assignee_id is not None:
            person = self.person(task.assignee_id)
            if person is not None:
                person.occupied += delta
        if task.class_of_service == ClassOfService.EXPEDITE and self.expedite is not None:
            self.expedite += delta

    # --- what changed -----------------------------------------------------------------

    def changes(self) -> tuple[list, list, list, list]:
        """(steps holding fewer tasks, steps holding more, persons with a limit holding fewer,
        cells (step, lane id) holding fewer) than when last asked (or read). A task changing
        lanes in its step leaves one cell with fewer and the step's other with more: the step
        is in both lists."""
        fewer, more, cells = [], [], []
        for pk, count in self.steps.items():
            before = self.seen.get(pk, count.occupied)
            if count.occupied != before and pk in self.board.steps:
                (fewer if count.occupied < before else more).append(self.board.steps[pk])
            self.seen[pk] = count.occupied
        for key, occupied in self.cells.items():
            before = self.seen_cells.get(key, 0)
            step = self.board.steps.get(key[0])
            if occupied != before and step is not None:
                if occupied < before:
                    cells.append((step, key[1]))
                    if step not in fewer:
                        fewer.append(step)
                elif step not in more:
                    more.append(step)
        self.seen_cells = dict(self.cells)
        freed = [p for p in self.persons.values() if p.limit and p.occupied < self.seen_persons[p.user_id]]
        self.seen_persons = {user_id: p.occupied for user_id, p in self.persons.items()}
        return fewer, more, freed, cells
