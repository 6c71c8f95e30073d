"""The only module that broadcasts board changes to live viewers.

Messages are sent after the transaction commits (`on_commit(robust=True)`), so a
rolled-back change sends nothing and a broken channel layer never fails a committed one.
"""

import logging

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)


def board_group(workflow_id) -> str:
    return f"board.{workflow_id}"


def broadcast_on_commit(workflow_id, message: dict) -> None:
    # A named function, not a functools.partial: Django's robust on_commit logs a failure
    # with the callback's __qualname__, which a partial lacks (the failure would escape).
    def send_board_event():
        _send(workflow_id, message)

    transaction.on_commit(send_board_event, robust=True)


def _send(workflow_id, message: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(board_group(workflow_id), {"type": "board.event", "message": message})
