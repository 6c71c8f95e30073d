"""A change made outside a request (service call, reconciler) reaches the board's group."""

import json

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from boards import admission
from boards.events import board_group


def test_changes_from_a_plain_thread_are_delivered_in_order(
    board, make_task, owner, django_capture_on_commit_callbacks
):
    backlog, doing, done = board
    layer = get_channel_layer()
    viewer = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(board_group(backlog.workflow_id), viewer)
    with django_capture_on_commit_callbacks(execute=True):
        task = make_task(backlog, "a")
    with django_capture_on_commit_callbacks(execute=True):
        admission.task_move(task=task, to_step=done, actor=owner)

    async def two_messages():  # one event loop for both (channels_redis buffers per loop)
        return [json.loads((await layer.receive(viewer))["text"]) for _ in range(2)]

    first, second = async_to_sync(two_messages)()
    assert (first["type"], second["type"]) == ("task.created", "task.moved")
    assert second["version"] == first["version"] + 1
