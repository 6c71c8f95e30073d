"""The occupancy ledger of a locked board: what every limit counts.

Counts are read after the locks (the steps' with the lock itself, a person's after their
membership row's lock, the board's expedite work when first asked), then kept current by
`enter()` and `leave()` alone: every door, fill and promotion that puts a task somewhere
or takes it away tells the ledger, which judges from the task itself whether it counts
(`is_live()`, `admitted`) and where (its step, its group, its assignee in an active step, the board's
expedite work). Nothing else changes a count.

The ledger also says what its counts did since last asked (`changes()`): a step holding
fewer tasks may fill, one holding more offers its consumers a pull, a person with fewer
tasks may take work a pull skipped for them. The change's worklist asks (worklist.py).
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
from workflows.models import Membership, Role, StepGroup, StepKind, WorkflowStep


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
    """Counts per step (occupied, queued), per group (the sum of its steps'), per person and
    of the board's expedite work; `enter()` and `leave()` are their only writers."""

    def __init__(self, board: LockedBoard, counted=None):
        self.board = board
        self.steps: dict = {}  # step id -> StepCount
        if counted is not None:  # the rows read with the lock: every step of the board
            self.steps = {pk: StepCount(0, 0, -1) for pk in board.steps}
            for step_id, occupied, queued, last in counted:
                self.steps[sql.uuid_value(step_id)] = StepCount(occupied, queued, last)
        self.persons: dict = {}  # user id -> Person, once locked
        self.expedite: int | None = None  # read when first asked
        self.seen = {pk: c.occupied for pk, c in self.steps.items()}  # counts when changes() last looked
        self.seen_persons: dict = {}

    # --- reads ------------------------------------------------------------------------

    def step(self, step: WorkflowStep) -> StepCount:
        """Read with the locks (a read's view, or a step made in this change: when first asked)."""
        if step.pk not in self.steps:
            with connection.cursor() as cursor:
                cursor.execute(statements.locked_section(connection.vendor)["count_step"], [sql.uuid_param(step.pk)])
                occupied, queued, last = cursor.fetchone()
            self.steps[step.pk] = StepCount(occupied, queued, -1 if last is None else last)
            self.seen[step.pk] = occupied
        return self.steps[step.pk]

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
        if not step.is_active:
            return
        if task.assignee_id is not None:
            person = self.person(task.assignee_id)
            if person is not None:
                person.occupied += delta
        if task.class_of_service == ClassOfService.EXPEDITE and self.expedite is not None:
            self.expedite += delta

    # --- what changed -----------------------------------------------------------------

    def changes(self) -> tuple[list, list, list]:
        """(steps holding fewer tasks, steps holding more, persons with a limit holding fewer)
        than when last asked (or read)."""
        fewer, more = [], []
        for pk, count in self.steps.items():
            before = self.seen.get(pk, count.occupied)
            if count.occupied != before and pk in self.board.steps:
                (fewer if count.occupied < before else more).append(self.board.steps[pk])
            self.seen[pk] = count.occupied
        freed = [p for p in self.persons.values() if p.limit and p.occupied < self.seen_persons[p.user_id]]
        self.seen_persons = {user_id: p.occupied for user_id, p in self.persons.items()}
        return fewer, more, freed
