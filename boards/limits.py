"""The limits an admission needs room in: one source per kind of limit.

Each kind is a `Limit` subclass: `of()` looks at one entry (a task into a step, from where)
and returns its limit, as the occupancy ledger counts it now, or None when it does not
apply; `named()` and `detail()` word its refusal. `SOURCES` is their order, the order a
refusal names the first full one. The expedite allowance is one of them, the other way
round (`Limit.allowance`): room in it lets an expedite task past a full limit. A new kind
of limit (a lane's, a cell's) is one more subclass in that list, and nothing else.
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
    nowhere that counted); `assigning`: it stays where it is and gets a new assignee."""

    step: WorkflowStep
    task: Task | None
    source: WorkflowStep | None
    assigning: bool


@dataclass(frozen=True)
class Limit:
    """One limit that applies to an admission, as the change counts it now. A kind of limit
    is a subclass: `of()` finds it for an entry, `named()` and `detail()` word its refusal.
    An `allowance` is the other way round: while it has room, an entry past a full limit is
    admitted anyway."""

    scope: ClassVar[str]
    allowance: ClassVar[bool] = False
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
class StepLimit(Limit):
    scope = "step"
    occupied: int

    @classmethod
    def of(cls, change, entry):
        step = entry.step
        if entry.assigning or not step.is_limited:
            return None
        return cls(step.pk, step.name, step.wip_limit, change.occupancy.step(step).occupied)

    def named(self, step):
        return {"step": {"id": str(step.pk), "name": step.name}}

    def detail(self):
        return f'Step "{self.name}" is at its WIP limit ({self.occupied} of {self.limit}).'


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
SOURCES = (StepLimit, GroupLimit, PersonLimit, ExpediteAllowance)


def limits(change, step: WorkflowStep, task: Task | None, *, source=None, assigning=False) -> list[Limit]:
    """The limits an entry of `task` into `step` needs room in (and the allowances that may
    let it past them), in the order a refusal names them. `change`: a board change or a
    read's view of the board (`.board`, `.occupancy`).
    `source` is the step it comes from (None: from nowhere that counted — created, restored,
    made permanent, promoted from a queue); `assigning`: it stays in `source` (= `step`) and
    gets a new assignee: only the person's applies."""
    found = entry(step, task, source=source, assigning=assigning)
    if found is None:
        return []
    return [limit for limit in (kind.of(change, found) for kind in SOURCES) if limit is not None]


def entry(step: WorkflowStep, task: Task | None, *, source=None, assigning=False) -> Entry | None:
    """The entry `limits()` judges (its arguments'); None for an ephemeral task: no limit holds it."""
    if task is not None and task.is_ephemeral:
        return None
    if source is not None and task is not None and not task.admitted:
        source = None  # a queued task held no place where it waited: it takes one on entry
    return Entry(step, task, source, assigning)


def limited_for(wip_limit: int, group_id, feeder_group_id) -> bool:
    """Does a step with these settings pull from a feeder in `feeder_group_id` under a limit?
    Its own limit, or its group's when the feeder is outside the group; else it does not pull."""
    return bool(wip_limit) or (group_id is not None and group_id != feeder_group_id)
