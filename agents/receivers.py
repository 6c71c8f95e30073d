"""A task leaving the board (archive, delete) cancels its live sessions, in the same
transaction, freeing their slots for queued sessions."""

from django.dispatch import receiver

from agents.services import end_task_sessions
from boards.signals import task_retired


@receiver(task_retired)
def cancel_sessions_of_retired_task(sender, *, change, task, **kwargs):
    what = "archived" if task.archived_at is not None else "deleted"
    end_task_sessions(change, task, detail=f"Cancelled: the task was {what}.")
