"""Live board viewers: one WebSocket per open board, members only.

On connect the viewer gets the whole board with its version; afterwards every message that
boards/events.py sends to the board's group after a commit is forwarded as is, through the
board's hub in this process (BoardHub). When the user's access changes
(boards.events.access_changed_on_commit) the socket re-checks it against the database and,
once lost, closes with 4403 and forwards nothing more.
"""

import asyncio
import contextlib
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from accounts.websocket import current_user, session_digest
from boards.events import board_group, viewer_group
from boards.snapshots import board_json
from workflows.access import role_in
from workflows.models import Role, Workflow

logger = logging.getLogger(__name__)

_GONE = object()

# Every role may watch a board; a role taken out of this set loses its open sockets too.
WATCH_ROLES = frozenset(Role)


@database_sync_to_async
def watchable_workflow(user, workflow_id) -> Workflow | None:
    """The board when `user` may watch it, else None (existence not leaked)."""
    workflow = Workflow.objects.filter(pk=workflow_id).first()
    if workflow is None or role_in(user, workflow.workspace_id) not in WATCH_ROLES:
        return None
    return workflow


@database_sync_to_async
def snapshot_message(workflow) -> str:
    """The `board.snapshot` message, around the board's JSON that its other readers share."""
    version, board = board_json(workflow=workflow)
    return f'{{"type":"board.snapshot","version":{version},"board":{board.decode()}}}'


class BoardHub:
    """A board's live messages for every viewer of it in one process: one channel in the
    board's group, received once per message and forwarded to each viewer's socket.

    The Redis layer already delivers a group message once per process, but each viewer then
    took it from the process's buffer with a receive of its own (a lock, two tasks and a
    wake-up per viewer and message): most of a move's CPU with 200 viewers. A viewer's
    messages wait in `pending` until it has sent its snapshot, so none goes before it."""

    hubs: dict = {}  # (event loop, group) -> its hub

    def __init__(self, layer, group: str, key):
        self.layer, self.group, self.key = layer, group, key
        self.viewers: dict = {}  # viewer -> its pending texts, or None once it has its snapshot
        self.started = None  # the hub's channel, once made
        self.receiving = None  # forward(), once started

    @classmethod
    def of(cls, layer, group: str) -> "BoardHub":
        """This process's hub of the group, made for its first viewer."""
        key = (asyncio.get_running_loop(), group)
        if key not in cls.hubs:
            cls.hubs[key] = cls(layer, group, key)
        return cls.hubs[key]

    async def join(self, viewer):
        """Forward the group's messages to `viewer` (held back until `live()`); once this
        returns, no message sent to the group afterwards is missed."""
        self.viewers[viewer] = []
        if self.started is None:
            self.started = asyncio.ensure_future(self.start())
        channel = await asyncio.shield(self.started)
        # Every join adds the channel: it is in the group whatever happened meanwhile (a Redis
        # restart), and the group's expiry counts from the latest join, as when each viewer
        # joined itself.
        await self.layer.group_add(self.group, channel)

    async def start(self) -> str:
        try:
            channel = await self.layer.new_channel()
        except BaseException:
            self.hubs.pop(self.key, None)  # the next viewer makes a hub of its own
            raise
        self.receiving = asyncio.ensure_future(self.forward(channel))
        return channel

    async def forward(self, channel: str):
        try:
            while True:
                text = (await self.layer.receive(channel))["text"]
                for viewer in list(self.viewers):
                    pending = self.viewers.get(viewer, _GONE)  # it may have left meanwhile
                    if pending is None:
                        await self.send(viewer, text)
                    elif pending is not _GONE:
                        pending.append(text)
        except Exception:
            # The channel layer is gone (Redis down): the sockets drop, and each viewer's
            # reconnect (board.js) takes a new snapshot instead of silently missing changes.
            logger.exception("board hub %s lost its channel layer", self.group)
            if self.hubs.get(self.key) is self:
                del self.hubs[self.key]
            for viewer in list(self.viewers):
                with contextlib.suppress(OSError, RuntimeError):  # already closing
                    await viewer.close(code=1011)

    async def send(self, viewer, text: str):
        try:
            await viewer.board_event(text)
        except (OSError, RuntimeError):  # its socket is closing: its disconnect removes it
            self.viewers.pop(viewer, None)

    async def live(self, viewer):
        """The viewer has its snapshot: send what waited, then forward as messages come."""
        pending = self.viewers.get(viewer)
        while pending:
            await self.send(viewer, pending.pop(0))
        if viewer in self.viewers:
            self.viewers[viewer] = None

    async def leave(self, viewer):
        self.viewers.pop(viewer, None)
        if self.viewers or self.hubs.get(self.key) is not self:
            return
        del self.hubs[self.key]  # a viewer joining from now on makes a new hub
        if self.started is None:
            return
        try:
            channel = await asyncio.shield(self.started)
        except Exception:
            return  # it never started: nothing to stop
        self.receiving.cancel()
        await asyncio.wait([self.receiving])  # stopped before the channel leaves the group
        await self.layer.group_discard(self.group, channel)


class BoardConsumer(AsyncJsonWebsocketConsumer):
    joined = ()
    hub = None
    refused = False
    session = ""  # the digest of the session that signed the socket in; none for a token

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4403)
            return
        if "api_token_id" not in self.scope:
            self.session = session_digest(self.scope["session"].session_key)
        # Join the user's group before checking access, so no revocation committed after the
        # check is missed; join the board's group before reading the snapshot, so no change
        # committed after the read is missed (one committed in between arrives with a version
        # the snapshot already holds, and the client skips it).
        self.joined = (viewer_group(user.pk),)
        await self.channel_layer.group_add(self.joined[0], self.channel_name)
        self.hub = BoardHub.of(self.channel_layer, board_group(self.scope["url_route"]["kwargs"]["workflow_id"]))
        try:
            await self.hub.join(self)
            workflow = await self.watchable()
            if workflow is None:
                await self.refuse()
                return
            message = await snapshot_message(workflow)
            await self.accept()
            await self.send(text_data=message)
            await self.hub.live(self)
        except BaseException:
            await self.leave_groups()  # a failed connect never disconnects: leave the hub now
            raise

    async def watchable(self) -> Workflow | None:
        """The board, when the socket's credential still holds and its user may watch it."""
        user = await current_user(self.scope)
        if user.pk != self.scope["user"].pk:
            return None
        return await watchable_workflow(user, self.scope["url_route"]["kwargs"]["workflow_id"])

    async def refuse(self):
        self.refused = True
        await self.leave_groups()
        await self.close(code=4403)

    async def leave_groups(self):
        for group in self.joined:
            await self.channel_layer.group_discard(group, self.channel_name)
        self.joined = ()
        if self.hub is not None:
            hub, self.hub = self.hub, None
            await hub.leave(self)

    async def disconnect(self, code):
        await self.leave_groups()

    async def receive_json(self, content, **kwargs):
        """Viewers only listen; writes go through the REST API."""

    async def board_event(self, text: str):
        """A live message, from the board's hub."""
        # Messages already queued when access was lost are dropped, never sent.
        if not self.refused:
            await self.send(text_data=text)

    async def access_changed(self, event):
        if self.refused:
            return
        ended = event["ended_session"] and event["ended_session"] == self.session
        if ended or await self.watchable() is None:
            await self.refuse()
