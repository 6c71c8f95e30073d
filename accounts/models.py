import hashlib
import secrets

from django.conf import settings
from django.db import models


def hash_token(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def active(self):
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """An API key. Only its SHA-256 is stored; the key itself is shown once, at creation."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=8, help_text="First characters of the key, to tell tokens apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # A scoped token is a runner's credential: it only reaches that workspace's sessions.
    workspace = models.ForeignKey(
        "workflows.Workspace",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="api_tokens",
    )

    objects = ApiTokenQuerySet.as_manager()

    def __str__(self):
        return f"{self.user} {self.prefix}…"

    @classmethod
    def issue(cls, *, user, name: str = "", workspace=None) -> tuple["ApiToken", str]:
        key = secrets.token_hex(20)
        token = cls.objects.create(user=user, name=name, prefix=key[:8], key_hash=hash_token(key), workspace=workspace)
        return token, key
