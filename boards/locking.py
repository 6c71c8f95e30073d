"""The board's commit point and its lock order (admission.md).

Every change to a board runs inside `board_change()` (changes.py), within an outermost
`@board_transaction`; `open_change()` takes, in this order:
  1. the workflow row (orders all changes of one board), locked by bumping its version,
  2. every step row of the board, ascending id, in one query,
  3. the task rows it changes (`lock_task`).
Session rows and the workspace's session guard, when a change needs them, come after.
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
from django.db.models import F, Max
from django.utils import timezone

from boards import statements
from boards.events import broadcast_on_commit
from boards.messages import change_message
from boards.models import LIVE, Task, TaskEvent
from boards.selectors import step_counts
from boards.snapshots import keep_change_on_commit
from kandev import sql
from kandev.errors import Invalid, KandevError
from workflows.models import Workflow, WorkflowStep

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
    last_position: int | None  # -1: no live task; None: a task at the end left, re-read


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
    orders: dict = field(default_factory=dict)  # step id -> task ids, when renumbered
    unsettled: set = field(default_factory=set)  # step ids that may now admit something
    filled: set = field(default_factory=set)  # (step id, task id) admitted by a fill
    message: dict | None = None
    dirty: bool = False
    _counts: dict = field(default_factory=dict)

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
        """Read after the locks, then kept current by every write of this change."""
        if step.pk not in self._counts:
            with connection.cursor() as cursor:
                cursor.execute(statements.locked_section(connection.vendor)["count_step"], [sql.uuid_param(step.pk)])
                occupied, queued, last = cursor.fetchone()
            self._counts[step.pk] = StepCounts(occupied, queued, -1 if last is None else last)
        return self._counts[step.pk]

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
        """Step 3 of the lock order: a task row of this board."""
        statement = statements.locked_section(connection.vendor)["lock_task"]
        rows = sql.fetch(statement, [sql.uuid_param(task_id), sql.uuid_param(self.workflow.pk)], Task)
        if not rows:
            raise NotFound("Not found.")
        return rows[0][0]

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
        self.unsettled.update(pk for pk, s in self.steps.items() if s.pull_from_step_id == step.pk and s.is_limited)

    def touch(self, *steps) -> None:
        self.dirty = True
        self.touched.update(step.pk for step in steps)

    @contextmanager
    def savepoint(self):
        """A savepoint that also owns this change's state: on any error inside, the database
        and every field of the change (events, counts, message, ...) go back to where they
        were, and the error goes on."""
        saved = {f.name: _copied(getattr(self, f.name)) for f in dataclasses.fields(self)}
        saved["_counts"] = {pk: dataclasses.replace(c) for pk, c in self._counts.items()}
        try:
            with transaction.atomic():
                yield self
        except BaseException:
            for name, value in saved.items():
                setattr(self, name, value)
            raise

    def live_message(self) -> dict:
        """The message live viewers get when this change commits."""
        return change_message(self)

    def announce(self, type_: str, **payload) -> None:
        """Name the change for live viewers; the first announcement wins (it is the cause)."""
        if self.message is None:
            self.message = {"type": type_, **payload}


def _copied(value):
    return value.copy() if isinstance(value, (dict, set, list)) else value


def open_change(workflow_id, *, actor=None) -> BoardChange:
    """Steps 1 and 2 of the lock order: the board, its version bumped, and its steps."""
    locked = statements.locked_section(connection.vendor)
    bumped = sql.fetch(locked["lock_and_bump"], [sql.uuid_param(workflow_id)], Workflow)
    if not bumped:
        raise NotFound("Not found.")
    ((workflow,),) = bumped
    steps = [step for (step,) in sql.fetch(locked["lock_steps"], [sql.uuid_param(workflow.pk)], WorkflowStep)]
    return BoardChange(workflow=workflow, steps={s.pk: s for s in steps}, actor=actor)


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
    sql.insert(change.events)
    message = change.live_message()
    keep_change_on_commit(workflow.pk, message)
    broadcast_on_commit(workflow.pk, message)
