"""The header's bell: one WebSocket per open page of a signed-in person, carrying their
unread count, sent on connect and again whenever their inbox changes (news arrived, or was
read in another tab: boards.events.inbox_changed_on_commit)."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from boards.events import inbox_group
from notifications.news import unread_count


class InboxConsumer(AsyncJsonWebsocketConsumer):
    group = ""

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4403)
            return
        self.group = inbox_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)  # before the count: none missed
        await self.accept()
        await self.send_count()

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive_json(self, content, **kwargs):
        """The bell only listens."""

    async def inbox_changed(self, event):
        await self.send_count()

    async def send_count(self):
        count = await database_sync_to_async(unread_count)(self.scope["user"])
        await self.send_json({"type": "inbox.unread", "unread": count})
