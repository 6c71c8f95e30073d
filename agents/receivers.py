"""A task leaving the board (archive, delete) cancels its live sessions, in the same
transaction, freeing their slots for queued sessions. Raised session limits start the
queued sessions that now fit."""

from django.dispatch import receiver

from agents.services import end_task_sessions, promote_board, refresh_workspace
from boards.signals import task_retired
from workflows.signals import session_limits_changed


@receiver(task_retired)
def cancel_sessions_of_retired_task(sender, *, change, task, **kwargs):
    what = "archived" if task.archived_at is not None else "deleted"
    end_task_sessions(change, task, detail=f"Cancelled: the task was {what}.")


@receiver(session_limits_changed)
def promote_after_limits_changed(sender, *, workspace_id, workflow_id=None, **kwargs):
    if workflow_id is None:
        refresh_workspace(workspace_id=workspace_id)
    else:
        promote_board(workflow_id=workflow_id)
