import uuid

from django.conf import settings
from django.db import models

from integrations import crypto
from workflows.models import Workflow, WorkflowStep

GITHUB_API = "https://api.github.com"


class DisabledReason(models.TextChoices):
    CREATOR_REMOVED = "creator_removed", "Its creator left or was removed from the workspace."
    CREATOR_VIEWER = "creator_viewer", "Its creator is now a viewer of the workspace."
    CREATOR_NOT_OWNER = "creator_not_owner", "Its creator is no longer an owner of the workspace."
    CREATOR_DEACTIVATED = "creator_deactivated", "Its creator's account was deactivated or deleted."


class ActsForCreator(models.Model):
    """A credential that acts for the person who made it (an intake's secret, a watch's token,
    an outbound webhook; integrations.credentials holds the rule):
    it stops when their authority ends (`disabled_at`, why in `disabled_reason`) and works again
    only when an owner takes it over. No creator means an operator made it (the admin)."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    disabled_at = models.DateTimeField(null=True, blank=True, editable=False)
    disabled_reason = models.CharField(max_length=30, blank=True, choices=DisabledReason.choices, editable=False)

    class Meta:
        abstract = True


class Intake(ActsForCreator):
    """A signed webhook door into a workflow: `POST /hooks/<id>/` creates tasks through admission.

    A null step means the workflow's start step (also after the chosen step is deleted).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="intakes")
    step = models.ForeignKey(WorkflowStep, null=True, blank=True, on_delete=models.SET_NULL, related_name="intakes")
    name = models.CharField(max_length=200, blank=True)
    # Encrypted: the HMAC needs the secret itself, and the API shows it only at creation.
    secret_encrypted = models.TextField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return self.name or f"Intake {self.pk}"

    def set_secret(self, plain: str) -> None:
        self.secret_encrypted = crypto.encrypt(plain)

    def secret(self) -> str:
        return crypto.decrypt(self.secret_encrypted)


class ReviewWatch(ActsForCreator):
    """Polls GitHub for open pull requests awaiting a reviewer; each becomes a task when its
    target step has room, and its task is archived once the pull request is closed."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="review_watches")
    step = models.ForeignKey(
        WorkflowStep,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="review_watches",
    )
    repositories = models.JSONField(default=list)  # ["owner/repo", ...]
    reviewer_login = models.CharField(max_length=100)
    poll_interval_seconds = models.PositiveIntegerField(default=300)
    enabled = models.BooleanField(default=True)
    api_base_url = models.URLField(max_length=500, default=GITHUB_API)
    token_encrypted = models.TextField(blank=True, editable=False)
    last_polled_at = models.DateTimeField(null=True, blank=True)
    # Set from GitHub's rate-limit headers or after failures; no request is made before it.
    backoff_until = models.DateTimeField(null=True, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"{self.reviewer_login} on {', '.join(self.repositories)}"

    def set_token(self, plain: str) -> None:
        self.token_encrypted = crypto.encrypt(plain) if plain else ""

    def token(self) -> str:
        return crypto.decrypt(self.token_encrypted) if self.token_encrypted else ""
