"""The limits an admission needs room in: one source per kind of limit.

Each kind is a `Limit` subclass: `of()` looks at one entry (a task into a step, from where)
and returns its limit, as the occupancy ledger counts it now, or None when it does not
apply; `named()` and `detail()` word its refusal. `SOURCES` is their order, the order a
refusal names the first full one. The expedite allowance is one of them, the other way
round (`Limit.allowance`): room in it lets an expedite task past a full limit. A new kind
of limit is one more subclass in that list, and nothing else: a cell's (a lane in one step)
and a lane's were added that way. The kinds that judge the task itself (`of_task`: its
cell, its lane, its assignee) are what a pull skips a candidate for (`held()`); the step's
and the group's are the room a pull fills.
"""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar

from boards.models import ClassOfService, Task, occupies
from common.errors import WipLimitReached
from workflows.models import WorkflowStep


@dataclass(frozen=True)
class Entry:
    """`task` (None: any task, for a pull's room) entering `step` from `source` (None: from
    nowhere that counted); `assigning`: it stays where it is and gets a new assignee. `lane`:
    the lane it enters (None: the one it is in); it comes from its own (`task.lane_id`)."""

    step: WorkflowStep
    task: Task | None
    source: WorkflowStep | None
    assigning: bool
    lane: object = None

    @property
    def lane_id(self):
        """The lane the task enters (None for any task)."""
        if self.lane is not None:
            return self.lane
        return self.task.lane_id if self.task is not None else None

    @property
    def stays_in_lane(self) -> bool:
        return self.task is not None and self.lane_id == self.task.lane_id


@dataclass(frozen=True)
class Limit:
    """One limit that applies to an admission, as the change counts it now. A kind of limit
    is a subclass: `of()` finds it for an entry, `named()` and `detail()` word its refusal.
    An `allowance` is the other way round: while it has room, an entry past a full limit is
    admitted anyway."""

    scope: ClassVar[str]
    allowance: ClassVar[bool] = False
    of_task: ClassVar[bool] = False  # judges the task itself (not a pull's room for any task)
    id: object
    name: str
    limit: int

    @classmethod
    def of(cls, change, entry: Entry) -> "Limit | None":
        """This kind's limit on `entry`, or None when it does not apply. `change`: a board
        change or a read's view of the board (`.board`, `.occupancy`)."""
        raise NotImplementedError

    @property
    def full(self) -> bool:
        return self.occupied >= self.limit

    @property
    def room(self) -> int:
        return self.limit - self.occupied

    def named(self, step: WorkflowStep) -> dict:
        """What the refusal names besides scope, limit and occupancy."""
        return {}

    def detail(self) -> str:
        raise NotImplementedError

    def refusal(self, step: WorkflowStep, *, detail: str | None = None) -> WipLimitReached:
        """The one refusal shape (409): the scope, what it names, the limit, its occupancy."""
        return WipLimitReached(
            scope=self.scope,
            limit=self.limit,
            occupied=self.occupied,
            detail=detail or self.detail(),
            **self.named(step),
        )


@dataclass(frozen=True)
class CellLimit(Limit):
    """A lane's limit in one step: its live admitted tasks there."""

    scope = "cell"
    of_task = True
    occupied: int
    lane: object  # the Lane

    @classmethod
    def of(cls, change, entry):
        step, lane_id = entry.step, entry.lane_id
        if entry.assigning or lane_id is None:
            return None
        cell = change.board.cell(lane_id, step.pk)
        if cell is None or (entry.source is not None and entry.source.pk == step.pk and entry.stays_in_lane):
            return None
        lane = change.board.lanes[lane_id]
        name = f"{lane.name} in {step.name}"
        return cls(cell.pk, name, cell.wip_limit, change.occupancy.cell(step, lane_id), lane)

    def named(self, step):
        return {
            "lane": {"id": str(self.lane.pk), "name": self.lane.name},
            "step": {"id": str(step.pk), "name": step.name},
        }

    def detail(self):
        return f'Lane "{self.lane.name}" is at its WIP limit in this step ({self.occupied} of {self.limit}).'


@dataclass(frozen=True)
class StepLimit(Limit):
    scope = "step"
    occupied: int

    @classmethod
    def of(cls, change, entry):
        """A task changing lanes in its step does not change the step's occupancy."""
        step, source = entry.step, entry.source
        if entry.assigning or not step.is_limited or (source is not None and source.pk == step.pk):
            return None
        return cls(step.pk, step.name, step.wip_limit, change.occupancy.step(step).occupied)

    def named(self, step):
        return {"step": {"id": str(step.pk), "name": step.name}}

    def detail(self):
        return f'Step "{self.name}" is at its WIP limit ({self.occupied} of {self.limit}).'


@dataclass(frozen=True)
class LaneLimit(Limit):
    """A lane's live admitted tasks in the board's active steps."""

    scope = "lane"
    of_task = True
    occupied: int

    @classmethod
    def of(cls, change, entry):
        """A task already counted in the lane (in an active step) does not change its occupancy."""
        step, source, lane_id = entry.step, entry.source, entry.lane_id
        if entry.assigning or lane_id is None or not step.is_active:
            return None
        lane = change.board.lanes[lane_id]
        if not lane.wip_limit or (source is not None and source.is_active and entry.stays_in_lane):
            return None
        return cls(lane.pk, lane.name, lane.wip_limit, change.occupancy.lane(lane))

    def named(self, step):
        return {"lane": {"id": str(self.id), "name": self.name}}

    def detail(self):
        return f'Lane "{self.name}" is at its WIP limit ({self.occupied} of {self.limit}).'


@dataclass(frozen=True)
class GroupLimit(Limit):
    scope = "group"
    occupied: int

    @classmethod
    def of(cls, change, entry):
        """A move between two steps of one group does not change the group's occupancy."""
        group = None if entry.assigning else change.board.group(entry.step)
        if group is None or (entry.source is not None and entry.source.group_id == group.pk):
            return None
        return cls(group.pk, group.name, group.wip_limit, change.occupancy.group(group))

    def named(self, step):
        return {"group": {"id": str(self.id), "name": self.name}, "step": {"id": str(step.pk), "name": step.name}}

    def detail(self):
        return f'Group "{self.name}" is at its WIP limit ({self.occupied} of {self.limit}).'


@dataclass(frozen=True)
class PersonLimit(Limit):
    scope = "person"
    of_task = True
    occupied: int

    @classmethod
    def of(cls, change, entry):
        """An assignee's limit applies when their task starts to count in an active step."""
        task, step, source = entry.task, entry.step, entry.source
        if task is None or task.assignee_id is None or not step.is_active:
            return None
        if not entry.assigning and source is not None and source.is_active:
            return None
        person = change.occupancy.person(task.assignee_id)
        if person is None or not person.limit:
            return None
        return cls(person.user_id, person.username, person.limit, person.occupied)

    def named(self, step):
        return {"assignee": {"id": self.id, "username": self.name}}

    def detail(self):
        return f"{self.name} is at their WIP limit ({self.occupied} of {self.limit})."


@dataclass(frozen=True)
class ExpediteAllowance(Limit):
    """At most `expedite_limit` expedite tasks in the board's active steps at once: within
    it, an expedite task enters past a full limit. Its count is read only
    when asked (`occupied`): most entries never need it."""

    scope = "expedite"
    allowance = True
    counted: Callable[[], int]  # the board's expedite work, this task's place there left out

    @classmethod
    def of(cls, change, entry):
        task, step, source = entry.task, entry.step, entry.source
        if task is None or task.class_of_service != ClassOfService.EXPEDITE or not step.is_active:
            return None
        already = source is not None and source.is_active and occupies(task)  # counted where it is now
        workflow = change.board.workflow
        return cls(workflow.pk, workflow.name, workflow.expedite_limit, lambda: change.occupancy.expedited() - already)

    @cached_property
    def occupied(self) -> int:
        return self.counted()

    def detail(self):
        tasks = "task" if self.occupied == 1 else "tasks"
        return f"This board already has {self.occupied} expedite {tasks} in progress (limit {self.limit})."


# In the order a refusal names the first full one.
SOURCES = (CellLimit, StepLimit, LaneLimit, GroupLimit, PersonLimit, ExpediteAllowance)


def limits(change, step: WorkflowStep, task: Task | None, *, source=None, assigning=False, lane=None) -> list[Limit]:
    """The limits an entry of `task` into `step` needs room in (and the allowances that may
    let it past them), in the order a refusal names them. `change`: a board change or a
    read's view of the board (`.board`, `.occupancy`).
    `source` is the step it comes from (None: from nowhere that counted — created, restored,
    made permanent, promoted from a queue); `assigning`: it stays in `source` (= `step`) and
    gets a new assignee: only the person's applies; `lane`: the lane it enters (None: its own)."""
    found = entry(step, task, source=source, assigning=assigning, lane=lane)
    if found is None:
        return []
    return [limit for limit in (kind.of(change, found) for kind in SOURCES) if limit is not None]


def entry(step: WorkflowStep, task: Task | None, *, source=None, assigning=False, lane=None) -> Entry | None:
    """The entry `limits()` judges (its arguments'); None for an ephemeral task: no limit holds it."""
    if task is not None and task.is_ephemeral:
        return None
    if source is not None and task is not None and not task.admitted:
        source = None  # a queued task held no place where it waited: it takes one on entry
    return Entry(step, task, source, assigning, lane)


def held(change, step: WorkflowStep, task: Task, *, source: WorkflowStep | None = None) -> Limit | None:
    """The first full limit of `task` itself (its cell, its lane, its assignee) for its entry
    into `step` from `source`, in its own lane: a pull or a promotion passes such a task over."""
    judged = entry(step, task, source=source)
    if judged is None:
        return None
    for kind in SOURCES:
        if kind.of_task and (limit := kind.of(change, judged)) is not None and limit.full:
            return limit
    return None


def limited_for(wip_limit: int, group_id, feeder_group_id) -> bool:
    """Does a step with these settings pull from a feeder in `feeder_group_id` under a limit?
    Its own limit, or its group's when the feeder is outside the group; else it does not pull."""
    return bool(wip_limit) or (group_id is not None and group_id != feeder_group_id)
