import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from boards.models import Task
from workflows.models import Workflow, WorkflowStep


class SessionStatus(models.TextChoices):
    QUEUED = "queued"  # waiting for a concurrency slot
    STARTING = "starting"  # holds a slot while a runner boots
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


# Sessions in these states hold a concurrency slot (and keep their task from being pulled).
HOLDING_SLOT = (SessionStatus.STARTING, SessionStatus.RUNNING)
LIVE = (SessionStatus.QUEUED, *HOLDING_SLOT)
TERMINAL = (SessionStatus.COMPLETED, SessionStatus.FAILED, SessionStatus.CANCELLED)


class AgentSession(models.Model):
    """One agent run for a task in a step. Its status changes only in agents/services.py."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # Null once the task is deleted: the run stays on record, cancelled.
    task = models.ForeignKey(Task, null=True, on_delete=models.SET_NULL, related_name="agent_sessions")
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="agent_sessions")
    step = models.ForeignKey(WorkflowStep, null=True, on_delete=models.SET_NULL, related_name="agent_sessions")
    status = models.CharField(max_length=10, choices=SessionStatus.choices)
    runner = models.CharField(max_length=200, blank=True, help_text="Who claimed it; blank while unclaimed.")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    detail = models.TextField(blank=True)
    forced = models.BooleanField(default=False)
    reason = models.TextField(blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["task"], condition=Q(status__in=LIVE), name="one_live_session_per_task"),
        ]
        indexes = [
            models.Index(fields=["workflow", "status", "queued_at", "id"], name="session_by_workflow_status"),
            models.Index(fields=["status", "started_at", "id"], name="session_by_status"),
        ]

    def __str__(self):
        return f"session {self.pk} ({self.status})"
