"""The limits an admission needs room in (product.md §2b): one source per kind of limit.

Each source looks at one entry (a task into a step, from where) and returns its `Limit`,
as the occupancy ledger counts it now, or None when it does not apply. `SOURCES` is their
order, the order a refusal names the first full one; a new kind of limit (a lane's, a
cell's) is one more source in that list.
"""

from dataclasses import dataclass

from boards.models import Task
from workflows.models import WorkflowStep


@dataclass(frozen=True)
class Limit:
    """One limit that applies to an admission, as the change counts it now."""

    scope: str  # "step" | "group" | "person"
    id: object
    name: str
    limit: int
    occupied: int

    @property
    def full(self) -> bool:
        return self.occupied >= self.limit

    @property
    def room(self) -> int:
        return self.limit - self.occupied


@dataclass(frozen=True)
class Entry:
    """`task` (None: any task, for a pull's room) entering `step` from `source` (None: from
    nowhere that counted); `assigning`: it stays where it is and gets a new assignee."""

    step: WorkflowStep
    task: Task | None
    source: WorkflowStep | None
    assigning: bool


def step_limit(change, entry: Entry) -> Limit | None:
    step = entry.step
    if entry.assigning or not step.is_limited:
        return None
    return Limit("step", step.pk, step.name, step.wip_limit, change.occupancy.step(step).occupied)


def group_limit(change, entry: Entry) -> Limit | None:
    """A move between two steps of one group does not change the group's occupancy."""
    group = None if entry.assigning else change.board.group(entry.step)
    if group is None or (entry.source is not None and entry.source.group_id == group.pk):
        return None
    return Limit("group", group.pk, group.name, group.wip_limit, change.occupancy.group(group))


def person_limit(change, entry: Entry) -> Limit | None:
    """An assignee's limit applies when their task starts to count in an active step."""
    task, step, source = entry.task, entry.step, entry.source
    if task is None or task.assignee_id is None or not step.is_active:
        return None
    if not entry.assigning and source is not None and source.is_active:
        return None
    person = change.occupancy.person(task.assignee_id)
    if person is None or not person.limit:
        return None
    return Limit("person", person.user_id, person.username, person.limit, person.occupied)


SOURCES = (step_limit, group_limit, person_limit)


def limits(change, step: WorkflowStep, task: Task | None, *, source=None, assigning=False) -> list[Limit]:
    """The limits an entry of `task` into `step` needs room in, in the order a refusal names
    them. `change`: a board change or a read's view of the board (`.board`, `.occupancy`).
    `source` is the step it comes from (None: from nowhere that counted — created, restored,
    made permanent, promoted from a queue); `assigning`: it stays in `source` (= `step`) and
    gets a new assignee: only the person's applies."""
    if task is not None and task.is_ephemeral:
        return []
    if source is not None and task is not None and not task.admitted:
        source = None  # a queued task held no place where it waited: it takes one on entry
    entry = Entry(step, task, source, assigning)
    return [limit for limit in (source_of(change, entry) for source_of in SOURCES) if limit is not None]


def limited_for(wip_limit: int, group_id, feeder_group_id) -> bool:
    """Does a step with these settings pull from a feeder in `feeder_group_id` under a limit?
    Its own limit, or its group's when the feeder is outside the group; else it does not pull."""
    return bool(wip_limit) or (group_id is not None and group_id != feeder_group_id)
