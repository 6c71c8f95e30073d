"""The board's commit point and its lock order (admission.md).

Every change to a board runs inside `board_change()` (changes.py), within an outermost
`@board_transaction`; `open_change()` takes, in this order:
  1. the workflow row (orders all changes of one board), locked by bumping its version,
  2. every step row of the board, ascending id, in one query,
  3. the task rows it changes (`lock_task`),
  4. the membership rows of the assignees whose personal limits it judges (`lock_members`,
     ascending id): a person's limit spans boards, so two boards serialize there.
Session rows and the workspace's session guard, when a change needs them, come after.
Groups live inside one board: the workflow lock orders their changes. Steps 1 to 3 (the task
when the change is about one) and then every step's counts go as one query (`open_change`).
"""

import dataclasses
import functools
import logging
import random
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.conf import settings
from django.db import OperationalError, connection, transaction
from django.db.models import Count, F, Max
from django.utils import timezone

from boards import statements
from boards.events import broadcast_on_commit, keep_change_on_commit
from boards.messages import change_message
from boards.models import LIVE, NOT_ASSIGNABLE, ClassOfService, Task, TaskEvent
from boards.selectors import step_counts
from kandev import sql
from kandev.errors import Invalid, KandevError
from workflows.models import Membership, OnFull, Role, StepGroup, StepKind, Workflow, WorkflowStep

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
class StepCounts:
    occupied: int
    queued: int
    last_position: int | None  # the last live key, or above it; -1: no live task; None: re-read


@dataclass
class Person:
    """An assignee's personal limit and their live admitted tasks in active steps of every
    board of the workspace, read after their membership row's lock."""

    user_id: int
    username: str
    role: str
    limit: int  # 0: no personal limit
    occupied: int


@dataclass
class BoardChange:
    """One transaction's view of a locked board: steps, counts, and what changed."""

    workflow: Workflow
    steps: dict  # step id -> locked WorkflowStep
    actor: object = None
    now: object = field(default_factory=timezone.now)
    touched: set = field(default_factory=set)
    changed_tasks: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    deleted: set = field(default_factory=set)
    orders: dict = field(default_factory=dict)  # step id -> [{"id", "position"}] in board order, when rebalanced
    unsettled: set = field(default_factory=set)  # step ids that may now admit something
    filled: set = field(default_factory=set)  # (step id, task id) admitted by a fill
    persons: dict = field(default_factory=dict)  # user id -> Person, after lock_members()
    freed: set = field(default_factory=set)  # assignees with less active work: their other boards may fill
    created: set = field(default_factory=set)  # task ids created in this change
    session_tasks: set = field(default_factory=set)  # task ids whose agent session changed
    agents: bool = False  # the message carries the board's agent figures
    message: dict | None = None
    dirty: bool = False
    read_only: bool = False  # a view of the board for a read (`board_view`): nothing is locked
    _counts: dict = field(default_factory=dict)
    _locked: dict = field(default_factory=dict)  # task id -> its row locked by open_change(), or None
    _groups: dict | None = None
    _expedited: int | None = None

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

    def counts(self, step: WorkflowStep) -> StepCounts:
        """Read with the locks (a read's view: when first asked), then kept current by every
        write of this change."""
        if step.pk not in self._counts:
            with connection.cursor() as cursor:
                cursor.execute(statements.locked_section(connection.vendor)["count_step"], [sql.uuid_param(step.pk)])
                occupied, queued, last = cursor.fetchone()
            self._counts[step.pk] = StepCounts(occupied, queued, -1 if last is None else last)
        return self._counts[step.pk]

    def group(self, step: WorkflowStep) -> StepGroup | None:
        """The step's group (read after the workflow lock, which orders every group change)."""
        if step.group_id is None:
            return None
        if self._groups is None:
            self._groups = {g.pk: g for g in StepGroup.objects.filter(workflow=self.workflow)}
        return self._groups.get(step.group_id)

    def group_steps(self, group: StepGroup) -> list[WorkflowStep]:
        return sorted((s for s in self.steps.values() if s.group_id == group.pk), key=lambda s: s.position)

    def group_occupied(self, group: StepGroup) -> int:
        return sum(self.counts(s).occupied for s in self.group_steps(group))

    def lock_members(self, user_ids) -> None:
        """Step 4 of the lock order: the membership rows of these assignees, ascending id, and
        their occupancy counted after the lock. Users already locked by this change are kept."""
        missing = set(user_ids) - self.persons.keys() - {None}
        if not missing:
            return
        memberships = Membership.objects if self.read_only else Membership.objects.select_for_update(of=("self",))
        rows = list(
            memberships.filter(workspace_id=self.workflow.workspace_id, user_id__in=missing)
            .order_by("id")
            .values_list("user_id", "user__username", "role", "wip_limit")
        )
        limited = [user_id for user_id, _, _, limit in rows if limit]
        occupied = dict(
            Task.objects.occupying()
            .filter(
                assignee_id__in=limited, step__kind=StepKind.ACTIVE, workflow__workspace_id=self.workflow.workspace_id
            )
            .values("assignee_id")
            .annotate(n=Count("id"))
            .values_list("assignee_id", "n")
            if limited
            else {}
        )
        for user_id, username, role, limit in rows:
            self.persons[user_id] = Person(user_id, username, role, limit, occupied.get(user_id, 0))

    def assignable(self, user_id) -> Person:
        """The person a task may be assigned to: a member or owner of the workspace."""
        self.lock_members([user_id])
        person = self.persons.get(user_id)
        if person is None or person.role not in (Role.OWNER, Role.MEMBER):
            raise Invalid({"assignee_id": [NOT_ASSIGNABLE]})
        return person

    def expedited(self) -> int:
        """Live admitted expedite tasks in active steps of this board, kept current."""
        if self._expedited is None:
            self._expedited = (
                Task.objects.occupying()
                .filter(workflow=self.workflow, class_of_service=ClassOfService.EXPEDITE, step__kind=StepKind.ACTIVE)
                .count()
            )
        return self._expedited

    def count_in(self, task: Task, step: WorkflowStep, delta: int) -> None:
        """Keep the person and expedite counts current as a counting task enters (+1) or
        leaves (-1) an active step. A person with a limit who has room again may take a
        task a pull skipped for them: here (every limited active step may fill) and on
        their other boards after commit (`freed`)."""
        if not step.is_active:
            return
        if task.assignee_id is not None:
            self.lock_members([task.assignee_id])
            person = self.persons.get(task.assignee_id)
            if person is not None:
                person.occupied += delta
                if delta < 0 and person.limit:
                    self.freed.add(person.user_id)
                    # A queue-mode step queues for a full assignee even without a limit of its own.
                    may_fill = (s for s in self.steps.values() if self.limited(s) or s.on_full == OnFull.QUEUE)
                    self.opened(*(s for s in may_fill if s.is_active))
        if task.class_of_service == ClassOfService.EXPEDITE:
            self.count_expedite(delta)

    def count_expedite(self, delta: int) -> None:
        if self._expedited is not None:
            self._expedited += delta

    def last_position(self, step: WorkflowStep) -> int:
        counts = self.counts(step)
        if counts.last_position is None:
            last = Task.objects.filter(LIVE, step=step).aggregate(last=Max("position"))["last"]
            counts.last_position = -1 if last is None else last
        return counts.last_position

    def touched_counts(self) -> dict:
        """{step_id: (occupied, queued)} of every touched step, for the live message.

        Counts this change read are current (every write keeps them so); only the steps it
        touched without reading (a renamed step, say) cost one query, for all of them.
        """
        known = {pk: (c.occupied, c.queued) for pk, c in self._counts.items() if pk in self.touched}
        missing = self.touched - known.keys()
        return known | (step_counts(missing) if missing else {})

    def lock_task(self, task_id) -> Task:
        """Step 3 of the lock order: a task row of this board (read with the board's lock
        when the change was opened for it)."""
        if task_id in self._locked:
            task = self._locked[task_id]
        else:
            statement = statements.locked_section(connection.vendor)["lock_task"]
            rows = sql.fetch(statement, [sql.uuid_param(task_id), sql.uuid_param(self.workflow.pk)], Task)
            task = rows[0][0] if rows else None
        if task is None:
            raise NotFound("Not found.")
        return task

    def record(self, task: Task, kind: str, *, from_step=None, to_step=None, reason="", **detail):
        self.dirty = True
        self.changed_tasks[task.pk] = task
        for step in (from_step, to_step):
            if step is not None:
                self.touched.add(step.pk)
        self.events.append(
            TaskEvent(
                workflow=self.workflow,
                task_id=task.pk,
                kind=kind,
                # Ids, not instances: the history outlives a step deleted in this same change.
                from_step_id=from_step.pk if from_step else None,
                to_step_id=to_step.pk if to_step else None,
                actor=self.actor,
                reason=reason,
                detail=detail,
            )
        )

    def opened(self, *steps) -> None:
        """Room may have opened in `steps` (a task left, a limit rose, a feeder was set):
        they fill before the change commits."""
        self.unsettled.update(step.pk for step in steps)

    def arrived(self, step: WorkflowStep) -> None:
        """A pullable task arrived in `step`: the limited steps it feeds may pull it."""
        self.unsettled.update(pk for pk, s in self.steps.items() if s.pull_from_step_id == step.pk and self.limited(s))

    def limited(self, step: WorkflowStep) -> bool:
        """Limited by its own WIP limit or by its group's: such a step fills itself."""
        return step.is_limited or step.group_id is not None

    def session_changed(self, task_id) -> None:
        """The agent session of a task of this board changed: the message carries the task."""
        self.dirty = True
        self.session_tasks.add(task_id)

    def agents_changed(self) -> None:
        """The board's agent figures (sessions holding or waiting for a slot, or their limits)
        may have changed: the message carries them."""
        self.dirty = True
        self.agents = True

    def touch(self, *steps) -> None:
        self.dirty = True
        self.touched.update(step.pk for step in steps)

    @contextmanager
    def savepoint(self):
        """A savepoint that also owns this change's state: on any error inside, the database
        and every field of the change (events, counts, message, ...) go back to where they
        were, and the error goes on."""
        saved = {f.name: _copied(getattr(self, f.name)) for f in dataclasses.fields(self)}
        try:
            with transaction.atomic():
                yield self
        except BaseException:
            for name, value in saved.items():
                setattr(self, name, value)
            raise

    def live_message(self, writes=()) -> dict:
        """The message live viewers get when this change commits; `writes` go with its reads."""
        return change_message(self, writes)

    def announce(self, type_: str, **payload) -> None:
        """Name the change for live viewers; the first announcement wins (it is the cause)."""
        if self.message is None:
            self.message = {"type": type_, **payload}


def _copied(value):
    if isinstance(value, dict):  # counts and persons are mutable records: copy them too
        return {k: dataclasses.replace(v) if dataclasses.is_dataclass(v) else v for k, v in value.items()}
    return value.copy() if isinstance(value, (set, list)) else value


def open_change(workflow_id, *, actor=None, task_id=None) -> BoardChange:
    """Steps 1 to 3 of the lock order (the board, its version bumped; its steps; the task
    `task_id`, when the change is about one) and then every step's counts, sent together:
    on PostgreSQL one round trip, for statements that each wait for the one before.
    Every write of the board waits for this lock, so each round trip held under it is
    paid by the writers queued behind (docs/benchmarks.md)."""
    locked = statements.locked_section(connection.vendor)
    board = sql.uuid_param(workflow_id)
    queries = [(locked["lock_and_bump"], [board], [Workflow]), (locked["lock_steps"], [board], [WorkflowStep])]
    if task_id is not None:
        queries.append((locked["lock_task"], [sql.uuid_param(task_id), board], [Task]))
    queries.append((locked["count_board"], [board], []))
    bumped, steps, *task_rows, counted = sql.fetch_together(*queries)
    if not bumped:
        raise NotFound("Not found.")
    ((workflow,),) = bumped
    change = BoardChange(workflow=workflow, steps={step.pk: step for (step,) in steps}, actor=actor)
    change._counts = {pk: StepCounts(0, 0, -1) for pk in change.steps}
    for step_id, occupied, queued, last in counted:
        change._counts[sql.uuid_value(step_id)] = StepCounts(occupied, queued, last)
    for rows in task_rows:  # the one task's, when asked for
        change._locked[task_id] = rows[0][0] if rows else None
    return change


def board_view(workflow: Workflow) -> BoardChange:
    """The board as a read sees it, without locks: the same counts and limits an admission
    would judge by, for explaining them (boards/waiting.py)."""
    steps = WorkflowStep.objects.filter(workflow=workflow)
    return BoardChange(workflow=workflow, steps={s.pk: s for s in steps}, read_only=True)


def close_change(change: BoardChange) -> None:
    """Write the change's history; on commit keep its live message for the board's readers
    (before sending it, so a viewer who reads the board on receiving it finds it kept) and
    send it. A change that changed nothing takes its version bump back."""
    workflow = change.workflow
    if not change.dirty:
        # Nothing changed: take the bump back (still under the lock, so nobody saw it).
        Workflow.objects.filter(pk=workflow.pk).update(version=F("version") - 1)
        workflow.version -= 1
        return
    for event in change.events:  # ties each event to its commit: history replays change by change
        event.detail["version"] = change.version
    message = change.live_message(sql.insert_statements(change.events))  # the history, sent with the message's read
    keep_change_on_commit(workflow.pk, message)
    broadcast_on_commit(workflow.pk, message)
