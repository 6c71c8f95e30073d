"""Fixtures of the board tests."""

import json

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from boards.events import board_group


@pytest.fixture
def broadcasts(django_capture_on_commit_callbacks):
    """Run `operation` to its commit and return the live messages it sent to the board's viewers.

    A marker sent after the commit ends the list, so "exactly these messages" needs no timeout.
    All receives run in one event loop: channels_redis keeps a received message in an
    in-flight backup until a cleaner task of that loop drops it, so a receive per loop
    (`async_to_sync(layer.receive)` each time) can get the previous message again.
    """

    def run(workflow, operation):
        layer = get_channel_layer()
        group = board_group(workflow.pk)
        viewer = async_to_sync(layer.new_channel)()
        async_to_sync(layer.group_add)(group, viewer)
        with django_capture_on_commit_callbacks(execute=True):
            operation()
        async_to_sync(layer.group_send)(group, {"type": "test.end", "text": "null"})

        async def received():  # one event loop for all (channels_redis buffers per loop)
            messages = []
            while (event := await layer.receive(viewer))["type"] != "test.end":
                messages.append(json.loads(event["text"]))
            return messages

        return async_to_sync(received)()

    return run
