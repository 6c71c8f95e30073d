from django.contrib import admin

from boards.models import Task, TaskEvent


@admin.register(Task)
class TaskAdmin(admin.ModelAdmin):
    """Read-only: every change to a task's step must pass admission."""

    list_display = ["title", "workflow", "step", "priority", "admitted", "archived_at", "external_ref"]
    list_filter = ["workflow", "priority", "admitted"]
    search_fields = ["title", "external_ref"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(TaskEvent)
class TaskEventAdmin(admin.ModelAdmin):
    list_display = ["at", "kind", "task_id", "from_step_id", "to_step_id", "actor", "reason"]
    list_filter = ["kind", "workflow"]

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
