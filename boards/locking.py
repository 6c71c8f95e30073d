"""The board's commit point and its lock order (admission.md).

Every change to a board runs inside `board_change()`, within an outermost
`@board_transaction`. It takes, in this order:
  1. the workflow row (orders all changes of one board), locked by bumping its version,
  2. every step row of the board, ascending id, in one query,
  3. the task rows it changes (`lock_task`).
Session rows and the workspace's session guard, when a change needs them, come after.
"""

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

from boards.events import broadcast_on_commit
from boards.models import LIVE, Task, TaskEvent
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
                cursor.execute(_sql().count_step, [_uuid(step.pk)])
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
        from boards.selectors import step_counts  # selectors import this module

        known = {pk: (c.occupied, c.queued) for pk, c in self._counts.items() if pk in self.touched}
        missing = self.touched - known.keys()
        return known | (step_counts(missing) if missing else {})

    def lock_task(self, task_id) -> Task:
        task = Task.objects.select_for_update().filter(pk=task_id, workflow=self.workflow).first()
        if task is None:
            raise NotFound("Not found.")
        return task

    def record(self, task: Task, kind: str, *, from_step=None, to_step=None, reason="", **detail):
        self.dirty = True
        self.changed_tasks[task.pk] = task
        for step in (from_step, to_step):
            if step is not None:
                self.touched.add(step.pk)
        self.events.append(TaskEvent(
            workflow=self.workflow,
            task_id=task.pk,
            kind=kind,
            # Ids, not instances: the history outlives a step deleted in this same change.
            from_step_id=from_step.pk if from_step else None,
            to_step_id=to_step.pk if to_step else None,
            actor=self.actor,
            reason=reason,
            detail=detail,
        ))

    def touch(self, *steps) -> None:
        self.dirty = True
        self.touched.update(step.pk for step in steps)

    def announce(self, type_: str, **payload) -> None:
        """Name the change for live viewers; the first announcement wins (it is the cause)."""
        if self.message is None:
            self.message = {"type": type_, **payload}


@dataclass(frozen=True)
class _LockedSectionSql:
    """The locked section's statements, written once from the models' metadata.

    Every admission runs them, and the ORM's query compiler cost more CPU than the rest
    of an admission (profiled: bench/profile.py create); the GIL makes that CPU the limit
    of admissions per second, contested or not.
    """

    lock_and_bump: str
    lock_steps: str
    count_step: str


def _columns(model) -> tuple[list[str], str]:
    fields = model._meta.concrete_fields
    return [f.attname for f in fields], ", ".join(connection.ops.quote_name(f.column) for f in fields)


@functools.cache
def _statements(vendor: str) -> _LockedSectionSql:
    q = connection.ops.quote_name
    for_update = " FOR UPDATE" if connection.features.has_select_for_update else ""
    version = q(Workflow._meta.get_field("version").column)
    task = Task._meta
    live = f"{q(task.get_field('archived_at').column)} IS NULL AND NOT {q(task.get_field('is_ephemeral').column)}"
    admitted = q(task.get_field("admitted").column)
    return _LockedSectionSql(
        # Step 1 of the lock order and the version bump in one round trip (admission.md
        # allows "the version bump itself" as the lock).
        lock_and_bump=(
            f"UPDATE {q(Workflow._meta.db_table)} SET {version} = {version} + 1"
            f" WHERE {q(Workflow._meta.pk.column)} = %s RETURNING {_columns(Workflow)[1]}"
        ),
        # Step 2: every step row of the board, ascending id, one query.
        lock_steps=(
            f"SELECT {_columns(WorkflowStep)[1]} FROM {q(WorkflowStep._meta.db_table)}"
            f" WHERE {q(WorkflowStep._meta.get_field('workflow').column)} = %s"
            f" ORDER BY {q(WorkflowStep._meta.pk.column)}{for_update}"
        ),
        # Occupancy after the locks (the partial index task_live_by_step keeps it cheap).
        count_step=(
            f"SELECT COUNT(*) FILTER (WHERE {admitted}), COUNT(*) FILTER (WHERE NOT {admitted}),"
            f" MAX({q(task.get_field('position').column)}) FROM {q(task.db_table)}"
            f" WHERE {q(task.get_field('step').column)} = %s AND {live}"
        ),
    )


def _sql() -> _LockedSectionSql:
    return _statements(connection.vendor)


def _uuid(value):
    """A UUID as this database takes it as a parameter (SQLite: hex text)."""
    return Workflow._meta.pk.get_db_prep_value(value, connection)


@functools.cache
def _converters(model, vendor: str) -> list:
    """(index, column, converters) for the fields whose database values need converting
    (JSON, and on SQLite also UUIDs, booleans, timestamps), as the ORM's compiler applies them."""
    found = []
    for index, field in enumerate(model._meta.concrete_fields):
        column = field.get_col(model._meta.db_table)
        converters = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
        if converters:
            found.append((index, column, converters))
    return found


@functools.cache
def _insert_statement(model, vendor: str) -> tuple[list, str, str]:
    fields = [f for f in model._meta.concrete_fields if not f.db_returning]  # not serial ids
    q = connection.ops.quote_name
    head = f"INSERT INTO {q(model._meta.db_table)} ({', '.join(q(f.column) for f in fields)}) VALUES "
    return fields, head, f"({', '.join(['%s'] * len(fields))})"


def insert(objs: list) -> None:
    """INSERT new instances of one model in one statement, as `save()` would write them
    (`pre_save` fills auto_now fields) but without its compiler, which costs more than the
    admission itself. Nothing listens to these models' save signals; serial ids stay unset."""
    if not objs:
        return
    fields, head, row = _insert_statement(type(objs[0]), connection.vendor)
    per_statement = max(1, connection.ops.bulk_batch_size(fields, objs))  # SQLite caps parameters
    with connection.cursor() as cursor:
        for start in range(0, len(objs), per_statement):
            batch, params = objs[start:start + per_statement], []
            for obj in batch:
                params.extend(f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields)
                obj._state.adding, obj._state.db = False, connection.alias
            cursor.execute(head + ", ".join([row] * len(batch)), params)


def _rows_as(model, sql: str, params: list) -> list:
    """Rows of `sql`, which selects `_columns(model)`, as model instances."""
    names, converters = _columns(model)[0], _converters(model, connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    instances = []
    for row in rows:
        if converters:
            row = list(row)
            for index, column, functions in converters:
                for convert in functions:
                    row[index] = convert(row[index], column, connection)
        instances.append(model.from_db(connection.alias, names, row))
    return instances


@contextmanager
def board_change(workflow_id, *, actor=None):
    """Lock a board for one change (bumping its version); on clean exit broadcast."""
    sql = _sql()
    bumped = _rows_as(Workflow, sql.lock_and_bump, [_uuid(workflow_id)])
    if not bumped:
        raise NotFound("Not found.")
    workflow = bumped[0]
    steps = _rows_as(WorkflowStep, sql.lock_steps, [_uuid(workflow.pk)])
    change = BoardChange(workflow=workflow, steps={s.pk: s for s in steps}, actor=actor)
    yield change
    if not change.dirty:
        # Nothing changed: take the bump back (still under the lock, so nobody saw it).
        Workflow.objects.filter(pk=workflow.pk).update(version=F("version") - 1)
        workflow.version -= 1
        return
    for event in change.events:  # ties each event to its commit: history replays change by change
        event.detail["version"] = change.version
    insert(change.events)
    from boards.selectors import change_message  # selectors import this module

    broadcast_on_commit(workflow.pk, change_message(change))
