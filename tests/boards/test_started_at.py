"""`Task.started_at`: a task's cycle starts at its first admission into an active step, set
once by whatever door admits it (create, move, pull, promotion, restore) and never reset;
migration boards/0014 backfilled it from the history."""

import importlib
from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from boards.admission import task_archive, task_create, task_move, task_restore
from boards.models import Task
from tests.factories import board
from tests.flow.factories import TaskEventFactory

pytestmark = pytest.mark.django_db


def started(task):
    return Task.objects.get(pk=task.pk).started_at


def test_set_at_the_first_active_admission_and_never_reset(workflow, owner):
    backlog, doing, done = board(workflow, pulls="none")
    task = task_create(workflow=workflow, actor=owner, title="A", step=backlog).task
    assert started(task) is None  # a backlog step starts nothing
    task_move(task=task, to_step=doing, actor=owner)
    first = started(task)
    assert first is not None and first == Task.objects.get(pk=task.pk).entered_step_at
    task_move(task=task, to_step=done, actor=owner)
    task_move(task=task, to_step=doing, actor=owner)  # back from done: the same cycle
    task_move(task=task, to_step=backlog, actor=owner)
    task_move(task=task, to_step=doing, actor=owner)
    assert started(task) == first


def test_created_straight_into_an_active_step(workflow, owner):
    backlog, doing, done = board(workflow, pulls="none")
    task = task_create(workflow=workflow, actor=owner, title="A", step=doing).task
    assert started(task) is not None
    assert started(task) == task.started_at == Task.objects.get(pk=task.pk).entered_step_at


def test_a_queued_task_starts_when_promoted(workflow, owner):
    backlog, doing, done = board(workflow, active={"Doing": 1}, pulls="none")
    doing.on_full = "queue"
    doing.save()
    first = task_create(workflow=workflow, actor=owner, title="A", step=doing).task
    waiting = task_create(workflow=workflow, actor=owner, title="B", step=doing).task
    assert started(waiting) is None  # queued, not admitted
    task_move(task=first, to_step=done, actor=owner)  # room: B is promoted
    promoted = Task.objects.get(pk=waiting.pk)
    assert promoted.admitted and promoted.started_at is not None
    assert promoted.started_at > started(first)


def test_a_pulled_task_starts_when_pulled(workflow, owner):
    backlog, doing, done = board(workflow, active={"Doing": 1})
    first = task_create(workflow=workflow, actor=owner, title="A", step=doing).task
    pulled = task_create(workflow=workflow, actor=owner, title="B", step=backlog).task
    assert started(pulled) is None
    task_move(task=first, to_step=done, actor=owner)  # Doing pulls B from Backlog
    assert Task.objects.get(pk=pulled.pk).step_id == doing.pk
    assert started(pulled) is not None


def test_a_restored_task_keeps_its_start_or_starts(workflow, owner):
    backlog, doing, done = board(workflow, pulls="none")
    task = task_create(workflow=workflow, actor=owner, title="A", step=doing).task
    first = started(task)
    task_archive(task=task, actor=owner)
    task_restore(task=Task.objects.get(pk=task.pk), actor=owner)
    assert started(task) == first


def test_the_migration_backfills_the_first_active_entry_from_the_history(workflow):
    backlog, doing, done = board(workflow, pulls="none")
    now = timezone.now()
    never = Task.objects.create(
        workflow=workflow, step=backlog, lane=workflow.lanes.first(), title="N", entered_step_at=now
    )
    went = Task.objects.create(
        workflow=workflow, step=done, lane=workflow.lanes.first(), title="W", entered_step_at=now
    )
    for task, kind, src, dst, days in (
        (never, "created", None, backlog, 5),
        (went, "created", None, backlog, 5),
        (went, "queued", backlog, doing, 4.5),  # waiting is no start
        (went, "promoted", None, doing, 4),
        (went, "moved", doing, done, 3),
        (went, "moved", done, doing, 2),
    ):
        TaskEventFactory(
            workflow=workflow,
            task_id=task.pk,
            kind=kind,
            from_step_id=getattr(src, "pk", None),
            to_step_id=dst.pk,
            at=now - timedelta(days=days),
        )
    migration = importlib.import_module("boards.migrations.0014_task_started_at")
    migration.backfill(apps, None)
    assert started(never) is None
    assert started(went) == now - timedelta(days=4)
