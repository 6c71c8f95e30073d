from django.contrib import admin

from agents.models import AgentSession
from common.admin import ReadOnlyAdmin


@admin.register(AgentSession)
class AgentSessionAdmin(ReadOnlyAdmin):
    """Read-only: status changes go through agents/services.py (API, cancel_session)."""

    list_display = [
        "id",
        "task",
        "workflow",
        "step",
        "status",
        "runner",
        "queued_at",
        "started_at",
        "finished_at",
    ]
    list_filter = ["status"]
    search_fields = ["task__title", "runner"]
