import uuid

from django.conf import settings
from django.db import models

from integrations import crypto
from workflows.models import Workflow, WorkflowStep

GITHUB_API = "https://api.github.com"


class Intake(models.Model):
    """A signed webhook door into a workflow: `POST /hooks/<id>/` creates tasks through admission.

    A null step means the workflow's start step (also after the chosen step is deleted).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="intakes")
    step = models.ForeignKey(WorkflowStep, null=True, blank=True, on_delete=models.SET_NULL, related_name="intakes")
    name = models.CharField(max_length=200, blank=True)
    # Encrypted: the HMAC needs the secret itself, and the API shows it only at creation.
    secret_encrypted = models.TextField(editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return self.name or f"Intake {self.pk}"

    def set_secret(self, plain: str) -> None:
        self.secret_encrypted = crypto.encrypt(plain)

    def secret(self) -> str:
        return crypto.decrypt(self.secret_encrypted)


class ReviewWatch(models.Model):
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
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"{self.reviewer_login} on {', '.join(self.repositories)}"

    def set_token(self, plain: str) -> None:
        self.token_encrypted = crypto.encrypt(plain) if plain else ""

    def token(self) -> str:
        return crypto.decrypt(self.token_encrypted) if self.token_encrypted else ""
