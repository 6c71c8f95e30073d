"""kandev/sql.py: the hand-written hot statements read and write exactly what the ORM does,
on PostgreSQL and on SQLite (where UUIDs, booleans, timestamps and JSON need converters)."""

import pytest
from django.db import connection
from django.utils import timezone

from boards.models import EventKind, Task, TaskEvent
from kandev import sql
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
    task = Task(workflow=step.workflow, step=step, title="t", position=0, entered_step_at=now)
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
