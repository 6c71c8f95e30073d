from django.contrib import admin

from boards.models import Task, TaskEvent
from common.admin import ReadOnlyAdmin


@admin.register(Task)
class TaskAdmin(ReadOnlyAdmin):
    """Read-only: every change to a task's step must pass admission."""

    list_display = ["title", "workflow", "step", "priority", "admitted", "archived_at", "external_ref"]
    list_filter = ["workflow", "priority", "admitted"]
    search_fields = ["title", "external_ref"]


@admin.register(TaskEvent)
class TaskEventAdmin(ReadOnlyAdmin):
    list_display = ["at", "kind", "task_id", "from_step_id", "to_step_id", "actor", "reason"]
    list_filter = ["kind", "workflow"]
