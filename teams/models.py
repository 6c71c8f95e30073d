import hashlib
import uuid

from django.conf import settings
from django.db import models

from workflows.models import Role, Workspace


def hash_invite(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class InviteState(models.TextChoices):
    OPEN = "open"
    USED = "used"
    REVOKED = "revoked"
    EXPIRED = "expired"


class InviteQuerySet(models.QuerySet):
    def open(self, now):
        """The links that still join someone at `now` (`Invite.state()` is OPEN)."""
        return self.filter(revoked_at__isnull=True, used_at__isnull=True, expires_at__gt=now)


class Invite(models.Model):
    """A single-use link that lets one person join a workspace with a role.

    Only a SHA-256 of the token is stored: the link is shown once, when it is made.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invites")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = InviteQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "id"]

    def __str__(self):
        return f"{self.role} invite to {self.workspace}"

    def state(self, now) -> InviteState:
        if self.revoked_at is not None:
            return InviteState.REVOKED
        if self.used_at is not None:
            return InviteState.USED
        if self.expires_at <= now:
            return InviteState.EXPIRED
        return InviteState.OPEN


class InvitationState(models.TextChoices):
    PENDING = "pending"
    ACCEPTED = "accepted"
    DECLINED = "declined"
    WITHDRAWN = "withdrawn"


class Invitation(models.Model):
    """An owner's invitation of one person, named by username or e-mail, to join a workspace
    with a role and a personal WIP limit. Nobody joins until the person accepts.

    `invitee` is the account the address named when the invitation was made, or none: only
    the invitee ever learns which (the owner's answer is the same either way). `username` and
    `email` keep the address as the owner gave it, one of them set."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    username = models.CharField(max_length=150, blank=True)
    email = models.EmailField(max_length=254, blank=True)
    invitee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="invitations"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    wip_limit = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=InvitationState.choices, default=InvitationState.PENDING)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "id"]
        indexes = [models.Index(fields=["invitee", "state"], name="invitation_invitee_state")]

    def __str__(self):
        return f"{self.role} invitation of {self.address} to {self.workspace}"

    @property
    def address(self) -> str:
        return self.username or self.email
