"""History with explicit timestamps: TaskEvent.at is auto_now_add, so the factory writes
the event and then sets its instant."""

import uuid
from datetime import timedelta

import factory
from django.db.models import F
from django.utils import timezone

from boards.models import Task, TaskEvent
from workflows.models import Workflow


class TaskFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Task

    title = factory.Sequence(lambda n: f"Task {n}")
    workflow = factory.LazyAttribute(lambda o: o.step.workflow)
    lane = factory.LazyAttribute(lambda o: o.workflow.lanes.order_by("position").first())
    entered_step_at = factory.LazyFunction(timezone.now)


class TaskEventFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = TaskEvent

    task_id = factory.LazyFunction(uuid.uuid4)
    kind = "moved"
    detail = factory.LazyFunction(dict)

    @classmethod
    def _create(cls, model_class, *args, at, **kwargs):
        event = super()._create(model_class, *args, **kwargs)
        model_class.objects.filter(pk=event.pk).update(at=at)
        event.at = at
        # A change of the history is a change of its board, which counts up its version (the
        # flow figures are kept per version: flow/cache.py).
        Workflow.objects.filter(pk=event.workflow_id).update(version=F("version") + 1)
        return event


def finished_history(workflow, steps, count, now):
    """`count` tasks, one finished per day, each 2 days less an hour after it started."""
    backlog, doing, done = steps
    day = timedelta(days=1)
    for k in range(count):
        task_id, started = uuid.uuid4(), now - (k + 2) * day
        TaskEventFactory(workflow=workflow, task_id=task_id, kind="created", to_step_id=doing.pk, at=started)
        TaskEventFactory(
            workflow=workflow,
            task_id=task_id,
            kind="moved",
            from_step_id=doing.pk,
            to_step_id=done.pk,
            at=now - k * day - timedelta(hours=1),
        )
