"""`?token=<key>` authentication for WebSocket clients that cannot send headers."""

from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from django.contrib.auth.models import AnonymousUser

from accounts.authentication import user_for_key


class TokenQueryAuthMiddleware:
    """Sets scope["user"] from a `token` query parameter; otherwise keeps the session user.

    A token that matches no active key leaves the connection anonymous, so the consumer
    refuses it like any other non-member.
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        keys = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
        if keys:
            user = await database_sync_to_async(user_for_key)(keys[0])
            scope = {**scope, "user": user or AnonymousUser()}
        return await self.app(scope, receive, send)
