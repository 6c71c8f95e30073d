"""A board's viewers in one process share one channel in the board's group (boards.consumers.
BoardHub): each committed change reaches every one of them once and in order, none before its
snapshot, and the channel leaves the group with the board's last viewer."""

import asyncio
import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator

from accounts.models import ApiToken
from boards.admission import task_move
from boards.consumers import BoardHub
from boards.events import board_group
from kandev.asgi import application

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://localhost")
VIEWERS = 12


async def members(group: str) -> set:
    """The channels in a group, as the channel layer keeps them."""
    layer = get_channel_layer()
    if hasattr(layer, "groups"):  # the in-memory layer
        return set(layer.groups.get(group, {}))
    connection = layer.connection(layer.consistent_hash(group))
    return {m.decode() for m in await connection.zrange(layer._group_key(group), 0, -1)}


def test_viewers_of_a_board_share_one_channel_and_each_gets_every_change_in_order(owner, workflow, board, make_task):
    backlog, doing, done = board
    tasks = [make_task(backlog, f"t{n}") for n in range(4)]
    _, key = ApiToken.issue(user=owner)
    group = board_group(workflow.pk)

    async def scenario():
        path = f"/ws/workflows/{workflow.pk}/?token={key}"
        viewers = [WebsocketCommunicator(application, path, headers=[ORIGIN]) for _ in range(VIEWERS)]
        for viewer in viewers:
            assert (await viewer.connect())[0]
            snapshot = await viewer.receive_json_from()
        [hub] = [h for (_, g), h in BoardHub.hubs.items() if g == group]
        assert len(hub.viewers) == VIEWERS
        assert len(await members(group)) == 1  # one channel for the process, not one a viewer

        for task in tasks:
            await database_sync_to_async(task_move)(task=task, to_step=done, actor=owner)
        for viewer in viewers:
            received = [await viewer.receive_json_from(timeout=5) for _ in tasks]
            assert [m["task"]["id"] for m in received] == [str(t.pk) for t in tasks]
            assert [m["version"] for m in received] == [snapshot["version"] + n for n in (1, 2, 3, 4)]
            await viewer.receive_nothing()

        for viewer in viewers[:-1]:
            await viewer.disconnect()
        assert len(await members(group)) == 1
        await viewers[-1].disconnect()
        assert not [g for (_, g) in BoardHub.hubs if g == group]
        assert await members(group) == set()

    async_to_sync(scenario)()


class Recorder:
    """A viewer as the hub sees one: what was forwarded to it, in order."""

    def __init__(self, fail: bool = False):
        self.texts, self.fail = [], fail

    async def board_event(self, text: str):
        if self.fail:
            raise OSError("socket closed")
        self.texts.append(text)


def test_a_viewer_gets_what_was_sent_before_its_snapshot_after_it_and_a_closed_socket_is_dropped():
    async def scenario():
        layer, group = get_channel_layer(), f"board.{uuid.uuid4()}"
        early, closing, late = Recorder(), Recorder(fail=True), Recorder()
        hub = BoardHub.of(layer, group)
        for viewer in (early, closing):
            await hub.join(viewer)
        await hub.live(early)
        await hub.live(closing)
        await hub.join(late)  # its snapshot is being read: what arrives now waits for it

        async def send_and_wait(text: str):
            await layer.group_send(group, {"type": "board.event", "text": text})
            while early.texts[-1:] != [text]:
                await asyncio.sleep(0)  # hub.forward runs on this loop: yield to it

        await send_and_wait("1")
        await send_and_wait("2")
        assert (early.texts, late.texts, hub.viewers[late]) == (["1", "2"], [], ["1", "2"])
        assert closing not in hub.viewers  # its send failed: dropped, the others served
        await hub.live(late)
        await send_and_wait("3")
        assert early.texts == late.texts == ["1", "2", "3"]

        await hub.leave(early)
        await hub.leave(late)
        assert BoardHub.hubs.get((asyncio.get_running_loop(), group)) is None
        assert hub.receiving.cancelled()
        assert await members(group) == set()

    async_to_sync(scenario)()
