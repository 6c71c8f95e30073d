import functools

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone
from rest_framework import authentication, exceptions

from accounts.models import ApiToken, hash_token
from common import sql


@functools.cache
def _token_statement(vendor: str) -> str:
    """Every API request runs it (common/sql.py says why it is hand-written)."""
    user = get_user_model()
    return (
        f"SELECT {sql.columns(ApiToken, 't')}, {sql.columns(user, 'u')}"
        f" FROM {sql.table(ApiToken)} t JOIN {sql.table(user)} u"
        f" ON u.{sql.column(user, 'id')} = t.{sql.column(ApiToken, 'user')}"
        f" WHERE t.{sql.column(ApiToken, 'key_hash')} = %s AND t.{sql.column(ApiToken, 'revoked_at')} IS NULL"
        f" AND u.{sql.column(user, 'is_active')}"
    )


def token_for_key(key: str) -> ApiToken | None:
    """The active token (with its active user) for an API key, or None."""
    rows = sql.fetch(_token_statement(connection.vendor), [hash_token(key)], ApiToken, get_user_model())
    if not rows:
        return None
    ((token, user),) = rows
    token.user = user
    # Touch at most once a minute: a write per request would cost more than the request.
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


def unscoped_token_for_key(key: str) -> ApiToken | None:
    """The active unscoped token for an API key, or None. Workspace-scoped (runner) tokens
    only authenticate the runner endpoints, through `TokenAuthentication`."""
    token = token_for_key(key)
    if token is None or token.workspace_id is not None:
        return None
    return token


def user_for_key(key: str):
    """The user of an unscoped API key, or None."""
    token = unscoped_token_for_key(key)
    return None if token is None else token.user


def user_of_token(token_id):
    """The user of a token that is still active and unscoped (an open WebSocket's re-check), or None."""
    token = (
        ApiToken.objects.active()
        .filter(pk=token_id, workspace__isnull=True, user__is_active=True)
        .select_related("user")
        .first()
    )
    return None if token is None else token.user


class TokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Token <key>`."""

    keyword = "Token"

    def authenticate(self, request):
        parts = authentication.get_authorization_header(request).split()
        if not parts or parts[0].lower() != self.keyword.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header.")
        try:
            key = parts[1].decode()
        except UnicodeError:
            raise exceptions.AuthenticationFailed("Invalid token header.") from None
        token = token_for_key(key)
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword
