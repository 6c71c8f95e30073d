from django.contrib import admin


class ReadOnlyAdmin(admin.ModelAdmin):
    """Browse only: writes to these models must go through kandev's services (admission,
    pull, version bump, broadcast), which the admin's plain saves would bypass."""

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
