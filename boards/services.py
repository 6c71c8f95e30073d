"""Task writes that are not admissions: they change a card, never its step."""

from boards.changes import board_change
from boards.locking import board_transaction
from boards.models import Task


@board_transaction
def task_update(*, task: Task, actor, **fields) -> Task:
    with board_change(task.workflow_id, actor=actor) as change:
        task = change.lock_task(task.pk)
        for name, value in fields.items():
            setattr(task, name, value)
        task.save(update_fields=[*fields, "updated_at"])
        change.touch(change.steps[task.step_id])
        change.changed_tasks[task.pk] = task
        change.announce("task.updated", task=task)
        return task
