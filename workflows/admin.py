from django.contrib import admin

from common.admin import ReadOnlyAdmin
from workflows.models import Membership, Workflow, WorkflowStep, Workspace


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "max_concurrent_sessions", "created_at"]
    search_fields = ["name", "slug"]
    inlines = [MembershipInline]


class WorkflowStepInline(admin.TabularInline):
    model = WorkflowStep
    extra = 0
    fk_name = "workflow"
    fields = ["position", "name", "color", "is_start_step", "wip_limit", "pull_from_step", "on_full"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Workflow)
class WorkflowAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "max_parallel_sessions", "on_session_limit", "version"]
    list_filter = ["workspace"]
    search_fields = ["name"]
    readonly_fields = ["version"]
    inlines = [WorkflowStepInline]


@admin.register(WorkflowStep)
class WorkflowStepAdmin(ReadOnlyAdmin):
    """Read-only: limit and feeder changes must go through the service that pulls and broadcasts."""

    list_display = ["name", "workflow", "position", "wip_limit", "pull_from_step", "on_full"]
    list_filter = ["workflow"]
