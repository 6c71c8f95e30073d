"""Signals sent after commit to apps that workflows must not import.

`session_limits_changed`: a workspace's session limit (`workflow_id` None) or a board's
(`max_parallel_sessions`, `on_session_limit`) changed; agents promotes the queued sessions
that now fit. Carries `workspace_id` and `workflow_id`.
"""

from django.db import transaction
from django.dispatch import Signal

session_limits_changed = Signal()


def session_limits_changed_on_commit(*, workspace_id, workflow_id=None) -> None:
    def send_session_limits_changed():
        session_limits_changed.send(sender=None, workspace_id=workspace_id, workflow_id=workflow_id)

    transaction.on_commit(send_session_limits_changed, robust=True)
