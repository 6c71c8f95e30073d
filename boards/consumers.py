"""Live board viewers: one WebSocket per open board, members only.

On connect the viewer gets the whole board with its version; afterwards every message that
boards/events.py sends to the board's group after a commit is forwarded as is. When the
user's access changes (boards.events.access_changed_on_commit) the socket re-checks it
against the database and, once lost, closes with 4403 and forwards nothing more.
"""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from accounts.websocket import current_user, session_digest
from boards.access import role_in
from boards.events import board_group, viewer_group
from boards.snapshots import board_json
from workflows.models import Role, Workflow

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


class BoardConsumer(AsyncJsonWebsocketConsumer):
    joined = ()
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
        self.joined = (viewer_group(user.pk), board_group(self.scope["url_route"]["kwargs"]["workflow_id"]))
        for group in self.joined:
            await self.channel_layer.group_add(group, self.channel_name)
        workflow = await self.watchable()
        if workflow is None:
            await self.refuse()
            return
        message = await snapshot_message(workflow)
        await self.accept()
        await self.send(text_data=message)

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

    async def disconnect(self, code):
        await self.leave_groups()

    async def dispatch(self, message):
        # Forwarding a live message touches no database, so it skips channels' close of old
        # connections: a hop to the process's one thread-sensitive thread for every message
        # and viewer, queued behind every snapshot build and access re-check of the process.
        if message["type"] == "board.event":
            await self.board_event(message)
        else:
            await super().dispatch(message)

    async def receive_json(self, content, **kwargs):
        """Viewers only listen; writes go through the REST API."""

    async def board_event(self, event):
        # Messages already queued when access was lost are dropped, never sent.
        if not self.refused:
            await self.send(text_data=event["text"])

    async def access_changed(self, event):
        if self.refused:
            return
        ended = event["ended_session"] and event["ended_session"] == self.session
        if ended or await self.watchable() is None:
            await self.refuse()
