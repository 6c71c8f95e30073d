"""`/mcp/`: the MCP server over streamable HTTP, in front of the Django ASGI app.

Requests need `Authorization: Token <key>` (an API token, as for the REST API); the tools
then act as its owner. Stateless mode, so any ASGI worker can answer any request. A GET's
event stream ends after KANDEV_MCP_IDLE_TIMEOUT_SECONDS without a message: in stateless mode
nothing is ever sent on it, and an open one would hold its connection for ever.
"""

import asyncio
import json

import anyio
from channels.db import database_sync_to_async
from django.conf import settings
from mcp.server.transport_security import TransportSecuritySettings

from accounts.authentication import user_for_key
from integrations.mcp_tools import USER_SCOPE_KEY, build_server

PATH = "/mcp/"


def transport_security() -> TransportSecuritySettings:
    """The SDK's DNS-rebinding guard, allowing the hosts Django allows."""
    hosts = list(settings.ALLOWED_HOSTS)
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[pattern for host in hosts for pattern in (host, f"{host}:*")],
        allowed_origins=[
            *settings.CSRF_TRUSTED_ORIGINS,
            *(f"{scheme}://{host}{port}" for host in hosts for scheme in ("http", "https") for port in ("", ":*")),
        ],
    )


@database_sync_to_async
def _user_id_for(key: str):
    user = user_for_key(key)
    return user.pk if user is not None else None


async def _token_user_id(scope) -> int | None:
    headers = dict(scope.get("headers") or [])
    parts = headers.get(b"authorization", b"").split()
    if len(parts) != 2 or parts[0].lower() != b"token":
        return None
    try:
        return await _user_id_for(parts[1].decode())
    except UnicodeError:
        return None


async def _unauthorized(send) -> None:
    body = json.dumps({"code": "not_authenticated", "detail": "Send an API token: Authorization: Token <key>"}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b"Token"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class McpEndpoint:
    def __init__(self):
        server = build_server()
        self.app = server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            transport_security=transport_security(),
        )
        self.session_manager = server.session_manager
        self._running: asyncio.Future | None = None
        self._task: asyncio.Task | None = None  # holds the session manager's run()

    async def _serve(self) -> None:
        try:
            async with self.session_manager.run():
                self._running.set_result(None)
                await anyio.sleep_forever()
        except BaseException as exc:
            if not self._running.done():
                self._running.set_exception(exc)
            raise

    async def _started(self) -> None:
        # Started on first use rather than via ASGI lifespan, so it works under any server.
        if self._running is None:
            self._running = asyncio.get_running_loop().create_future()
            self._task = asyncio.get_running_loop().create_task(self._serve())
        await asyncio.shield(self._running)

    async def __call__(self, scope, receive, send) -> None:
        user_id = await _token_user_id(scope)
        if user_id is None:
            await _unauthorized(send)
            return
        await self._started()
        scope = {**scope, USER_SCOPE_KEY: user_id}
        if scope["method"] == "GET":
            await until_idle(self.app, scope, receive, send, settings.KANDEV_MCP_IDLE_TIMEOUT_SECONDS)
        else:
            await self.app(scope, receive, send)


async def until_idle(app, scope, receive, send, idle: float) -> None:
    """Serve `app`'s streamed response until `idle` seconds pass without a message on it
    (an SSE comment, such as a keep-alive ping, is none); then end the response cleanly."""
    started = ended = False
    with anyio.CancelScope(deadline=anyio.current_time() + idle) as serving:

        async def sending(message) -> None:
            nonlocal started, ended
            if message["type"] == "http.response.start":
                started = True
            elif message["type"] == "http.response.body":
                ended = not message.get("more_body", False)
                body = message.get("body", b"")
                if body and not body.startswith(b":"):
                    serving.deadline = anyio.current_time() + idle
            await send(message)

        await app(scope, receive, sending)
    if serving.cancelled_caught and not ended:
        if not started:
            await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def with_mcp(django_app):
    """Route `/mcp` and `/mcp/...` to the MCP endpoint, everything else to Django."""
    endpoint = McpEndpoint()

    async def app(scope, receive, send):
        if scope["type"] == "http" and (scope["path"] == PATH.rstrip("/") or scope["path"].startswith(PATH)):
            await endpoint(scope, receive, send)
        else:
            await django_app(scope, receive, send)

    return app
