"""common/sql.py: the hand-written hot statements read and write exactly what the ORM does,
on PostgreSQL and on SQLite (where UUIDs, booleans, timestamps and JSON need converters)."""

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from boards import admission
from boards.models import EventKind, Task, TaskEvent
from common import sql
from tests.factories import StepFactory
from workflows.models import WorkflowStep


@pytest.mark.django_db
def test_fetch_builds_the_same_instances_as_the_orm():
    step = StepFactory(wip_limit=3, events={"on_enter": [{"type": "auto_start_agent"}]})
    statement = (
        f"SELECT {sql.columns(WorkflowStep, 's')}, {sql.column(WorkflowStep, 'name')} FROM {sql.table(WorkflowStep)} s"
        f" WHERE s.{sql.column(WorkflowStep, 'id')} = %s"
    )
    ((fetched, name),) = sql.fetch(statement, [sql.uuid_param(step.pk)], WorkflowStep)
    loaded = WorkflowStep.objects.get(pk=step.pk)
    fields = [f.attname for f in WorkflowStep._meta.concrete_fields]
    assert {f: getattr(fetched, f) for f in fields} == {f: getattr(loaded, f) for f in fields}
    assert fetched.events == {"on_enter": [{"type": "auto_start_agent"}]}  # JSON decoded
    assert name == step.name
    assert not fetched._state.adding


@pytest.mark.django_db
def test_insert_writes_what_save_would_in_as_many_statements_as_the_database_needs():
    step = StepFactory()
    now = timezone.now()
    task = Task(
        workflow=step.workflow, step=step, lane=step.workflow.lanes.get(), title="t", position=0, entered_step_at=now
    )
    sql.insert([task])
    saved = Task.objects.get(pk=task.pk)
    assert (saved.title, saved.step_id, saved.admitted, saved.archived_at) == ("t", step.pk, True, None)
    assert saved.created_at is not None and saved.updated_at is not None  # auto_now filled

    # More rows than SQLite takes parameters for in one statement.
    events = [
        TaskEvent(workflow=step.workflow, task_id=task.pk, kind=EventKind.MOVED, to_step_id=step.pk, detail={"n": i})
        for i in range(300)
    ]
    sql.insert(events)
    stored = list(TaskEvent.objects.filter(task_id=task.pk).order_by("id").values_list("detail", flat=True))
    assert stored == [{"n": i} for i in range(300)]
    if connection.vendor == "sqlite":
        assert connection.ops.bulk_batch_size([f for f in TaskEvent._meta.concrete_fields], events) < 300


@pytest.mark.django_db
def test_fetch_together_reads_and_writes_in_order_and_as_one_query_on_postgresql():
    step = StepFactory()
    now = timezone.now()
    task = Task(
        workflow=step.workflow, step=step, lane=step.workflow.lanes.get(), title="t", position=0, entered_step_at=now
    )
    event = TaskEvent(workflow=step.workflow, task_id=task.pk, kind=EventKind.CREATED, to_step_id=step.pk)
    count = f"SELECT COUNT(*) FROM {sql.table(Task)} WHERE {sql.column(Task, 'step')} = %s"
    by_id = f"SELECT {sql.columns(Task)} FROM {sql.table(Task)} WHERE {sql.column(Task, 'id')} = %s"
    with CaptureQueriesContext(connection) as captured:
        before, *written, after, (fetched,) = sql.fetch_together(
            (count, [sql.uuid_param(step.pk)], ()),
            *sql.insert_statements([task]),
            *sql.insert_statements([event]),
            (count, [sql.uuid_param(step.pk)], ()),
            (by_id, [sql.uuid_param(task.pk)], [Task]),
        )
    assert (before, written, after) == ([(0,)], [None, None], [(1,)])  # each statement saw the one before
    assert fetched[0].pk == task.pk and fetched[0].title == "t"
    assert TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.CREATED).exists()
    assert len(captured) == (1 if connection.vendor == "postgresql" else 5)
    with CaptureQueriesContext(connection) as captured:
        assert sql.fetch_together() == [] and sql.insert([]) is None
    assert len(captured) == 0  # nothing to send, nothing sent


@pytest.mark.django_db(transaction=True)
def test_fetch_together_stops_at_the_first_error_and_the_transaction_writes_nothing():
    step = StepFactory()
    task = Task(
        workflow=step.workflow,
        step=step,
        lane=step.workflow.lanes.get(),
        title="t",
        position=0,
        entered_step_at=timezone.now(),
    )
    with pytest.raises(DatabaseError), transaction.atomic():
        twice = sql.insert_statements([task]) * 2  # the same primary key again
        sql.fetch_together(*twice, ("SELECT 2", [], ()))
    assert not Task.objects.filter(pk=task.pk).exists()


def test_a_move_takes_the_board_its_steps_its_task_and_every_count_in_one_query(board, make_task, owner, spelt):
    backlog, _, done = board
    task = make_task(backlog)
    with CaptureQueriesContext(connection) as captured:
        admission.task_move(task=task, to_step=done, actor=owner)
    ran = [spelt(q["sql"]) for q in captured]
    locking = [q for q in ran if 'UPDATE "workflows_workflow"' in q]
    counting = [q for q in ran if "COUNT(*) FILTER" in q]
    if connection.vendor == "postgresql":
        (opened,) = locking
        assert counting == [opened]  # the counts went with the locks, not after them
        # In the lock order: the board, its steps, the task, then the counts.
        marks = ['UPDATE "workflows_workflow"', 'FROM "workflows_workflowstep"', 'FROM "boards_task" WHERE "id"']
        assert [opened.index(mark) for mark in marks] == sorted(opened.index(mark) for mark in marks)
        assert opened.index(marks[-1]) < opened.index("GROUP BY")
    else:
        assert len(locking) == 1 and len(counting) == 1  # the counts of every step in one statement
    task.refresh_from_db()
    assert task.step_id == done.pk
