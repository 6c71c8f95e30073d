import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.signals import token_revoked


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

    def revoke(self) -> None:
        """The key stops working at once; the row stays for the audit trail."""
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            ApiToken.objects.filter(pk=self.pk).update(revoked_at=self.revoked_at)
            token_revoked.send(sender=ApiToken, user_id=self.user_id)  # its open sockets close


class Theme(models.TextChoices):
    SYSTEM = "system", "Follow the system"
    LIGHT = "light", "Light"
    DARK = "dark", "Dark"


class Notify(models.TextChoices):
    """Where a person hears of one kind of news."""

    INBOX = "inbox", "In kandev only"
    EMAIL = "email", "By e-mail only"
    BOTH = "both", "In kandev and by e-mail"
    OFF = "off", "Not at all"


# The kinds of news a person chooses for, in the order the profile page lists them.
NOTIFY_KINDS = {
    "mentioned": "Someone mentions me",
    "assigned": "A task is assigned to me",
    "commented": "Someone comments on a task I watch",
    "pulled": "A task I watch is pulled",
    "blocked": "A task I watch is blocked",
    "unblocked": "A task I watch is unblocked",
    "forced": "A task I watch is forced past a limit",
    "due": "A due date passes",
    "past_sle": "A task I watch is past its service level expectation",
}
NOTIFY_DEFAULT = Notify.INBOX


class Profile(models.Model):
    """What a person says about themselves beyond Django's user: made on first need."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="profile"
    )
    name = models.CharField(max_length=150, blank=True)
    time_zone = models.CharField(max_length=64, default="UTC")
    theme = models.CharField(max_length=6, choices=Theme.choices, default=Theme.SYSTEM)
    # kind -> Notify value; a kind missing here takes NOTIFY_DEFAULT (kinds may be added later).
    notify = models.JSONField(default=dict, blank=True)
    # The account's e-mail was shown to reach its owner (a reset link used, or an OpenID
    # Connect provider vouched for it); only then may a sign-in by that e-mail reach it.
    email_verified = models.BooleanField(default=False)

    def __str__(self):
        return self.name or str(self.user)

    def notify_choices(self) -> dict[str, str]:
        return {kind: self.notify.get(kind, NOTIFY_DEFAULT) for kind in NOTIFY_KINDS}
