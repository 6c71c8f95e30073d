"""Live board viewers: one WebSocket per open board, members only.

On connect the viewer gets the whole board with its version; afterwards every message that
boards/events.py sends to the board's group after a commit is forwarded as is.
"""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from boards.access import role_in
from boards.events import board_group
from boards.snapshots import board_snapshot
from workflows.models import Workflow


@database_sync_to_async
def member_workflow(user, workflow_id) -> Workflow | None:
    """The board when `user` is a member of its workspace, else None (existence not leaked)."""
    workflow = Workflow.objects.filter(pk=workflow_id).first()
    if workflow is None or user is None or role_in(user, workflow.workspace_id) is None:
        return None
    return workflow


@database_sync_to_async
def snapshot_of(workflow) -> dict:
    return board_snapshot(workflow=workflow)


class BoardConsumer(AsyncJsonWebsocketConsumer):
    group = None

    async def connect(self):
        workflow_id = self.scope["url_route"]["kwargs"]["workflow_id"]
        workflow = await member_workflow(self.scope.get("user"), workflow_id)
        if workflow is None:
            await self.close(code=4403)
            return
        # Join the group before reading the snapshot, so no change committed after the read
        # is missed; one committed in between arrives with a version the snapshot already
        # holds, and the client skips it.
        self.group = board_group(workflow.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        snapshot = await snapshot_of(workflow)
        await self.accept()
        version = snapshot["workflow"]["version"]
        await self.send_json({"type": "board.snapshot", "version": version, "board": snapshot})

    async def disconnect(self, code):
        if self.group is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        """Viewers only listen; writes go through the REST API."""

    async def board_event(self, event):
        await self.send(text_data=event["text"])
