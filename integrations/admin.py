from django import forms
from django.contrib import admin

from integrations.models import Intake, ReviewWatch


@admin.register(Intake)
class IntakeAdmin(admin.ModelAdmin):
    """Secrets are never shown; create intakes through the API, which shows the secret once."""

    list_display = ["id", "name", "workflow", "step", "created_by", "created_at", "disabled_reason"]
    list_filter = ["disabled_reason", "workflow"]
    readonly_fields = ["created_by", "created_at", "disabled_at", "disabled_reason"]

    def has_add_permission(self, request):
        return False


class ReviewWatchForm(forms.ModelForm):
    api_base_url = forms.URLField(max_length=500, assume_scheme="https", initial="https://api.github.com")
    token = forms.CharField(
        required=False,
        widget=forms.PasswordInput(render_value=False),
        help_text="Write-only. Leave blank to keep the stored token.",
    )

    class Meta:
        model = ReviewWatch
        fields = [
            "workflow",
            "step",
            "repositories",
            "reviewer_login",
            "poll_interval_seconds",
            "enabled",
            "api_base_url",
        ]

    def save(self, commit=True):
        watch = super().save(commit=False)
        if self.cleaned_data.get("token"):
            watch.set_token(self.cleaned_data["token"])
        if commit:
            watch.save()
        return watch


@admin.register(ReviewWatch)
class ReviewWatchAdmin(admin.ModelAdmin):
    form = ReviewWatchForm
    list_display = [
        "reviewer_login",
        "workflow",
        "step",
        "enabled",
        "poll_interval_seconds",
        "last_polled_at",
        "backoff_until",
        "created_by",
        "disabled_reason",
    ]
    list_filter = ["enabled", "disabled_reason", "workflow"]
    readonly_fields = [
        "last_polled_at",
        "backoff_until",
        "consecutive_failures",
        "last_error",
        "created_by",
        "created_at",
        "disabled_at",
        "disabled_reason",
    ]
