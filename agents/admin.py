from django.contrib import admin

from agents.models import AgentSession


@admin.register(AgentSession)
class AgentSessionAdmin(admin.ModelAdmin):
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

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
