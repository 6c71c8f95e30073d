"""WebSocket handshake authentication.

An API key (`Authorization: Token <key>`, or `?token=<key>` for old clients) authenticates the
handshake by itself and needs no `Origin`: a page on another site cannot send one. Without a
key the session cookie does, and then the handshake must come from an allowed origin, as
Django's CSRF check asks of a form: the server's own (scheme, host and port as the client
addressed it) or one of CSRF_TRUSTED_ORIGINS.
"""

import hashlib
from importlib import import_module
from urllib.parse import parse_qs

from channels.auth import get_user
from channels.db import database_sync_to_async
from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http.request import split_domain_port, validate_host

from accounts.authentication import unscoped_token_for_key, user_of_token


def presented_key(scope) -> str | None:
    """The API key of the handshake: the Authorization header first, then `?token=`."""
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() == "token":
                return key.strip()
    keys = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return keys[0] if keys else None


def header(scope, name: bytes) -> str:
    return next((v.decode("latin-1") for n, v in scope.get("headers", []) if n == name), "")


def is_secure(scope) -> bool:
    if scope.get("scheme") == "wss":
        return True
    if settings.SECURE_PROXY_SSL_HEADER:  # ("HTTP_X_FORWARDED_PROTO", "https"), as Django reads it
        meta_name, secure_value = settings.SECURE_PROXY_SSL_HEADER
        name = meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        return header(scope, name).split(",")[0].strip() == secure_value
    return False


def allowed_origin(scope) -> bool:
    origin = header(scope, b"origin").lower()
    if not origin:
        return False
    if origin in {o.lower() for o in settings.CSRF_TRUSTED_ORIGINS}:
        return True
    host = header(scope, b"host").lower()
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    return origin == f"{'https' if is_secure(scope) else 'http'}://{host}"


class HandshakeAuthMiddleware:
    """Inside channels' AuthMiddlewareStack: a presented key replaces the session user (a key
    that matches no active unscoped token leaves the socket anonymous, refused by the
    consumer like any non-member); a session handshake from a disallowed origin is refused.
    `scope["api_token_id"]` says which token authenticated the socket, for re-checks."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        key = presented_key(scope)
        if key is not None:
            token = await database_sync_to_async(unscoped_token_for_key)(key)
            user = AnonymousUser() if token is None else token.user
            scope = {**scope, "user": user, "api_token_id": None if token is None else token.pk}
        elif not allowed_origin(scope):
            return await WebsocketDenier()(scope, receive, send)
        return await self.app(scope, receive, send)


SessionStore = import_module(settings.SESSION_ENGINE).SessionStore


def session_digest(session_key: str | None) -> str:
    """Names a session in channel-layer messages without putting its key in Redis."""
    return hashlib.sha256(session_key.encode()).hexdigest() if session_key else ""


async def current_user(scope):
    """The socket's user as the database says now: its token still active, or its session
    still signed in and its user active; AnonymousUser when not."""
    if "api_token_id" in scope:
        user = await database_sync_to_async(user_of_token)(scope["api_token_id"])
        return user or AnonymousUser()
    session = scope.get("session")
    if session is None or session.session_key is None:
        return AnonymousUser()
    # A fresh store: the socket's own copy was read at the handshake.
    return await get_user({"session": SessionStore(session.session_key)})
