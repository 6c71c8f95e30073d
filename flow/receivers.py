"""Observe `kandev_task_cycle_seconds` when a task is admitted into a done step: after the
commit, when the change's events are in the history (flow/cycle.py reads them)."""

from django.db import transaction
from django.dispatch import receiver

from boards.signals import task_admitted
from flow.cycle import observe_first_finishes
from flow.kinds import DONE


@receiver(task_admitted)
def observe_cycle_time(sender, change, task, step, **kwargs):
    if step.kind != DONE:
        return
    workflow, task_id = change.workflow, task.pk

    def observe():
        observe_first_finishes(workflow, [task_id])

    transaction.on_commit(observe, robust=True)  # a metric never fails a committed change
