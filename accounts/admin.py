from django.contrib import admin

from accounts.models import ApiToken
from accounts.signals import token_revoked


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["user", "name", "prefix", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["prefix", "key_hash", "created_at", "last_used_at"]
    search_fields = ["user__username", "name", "prefix"]

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if change and "revoked_at" in form.changed_data:
            token_revoked.send(sender=ApiToken, user_id=obj.user_id)  # its open sockets close
