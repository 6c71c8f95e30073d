import re

from rest_framework import serializers

from common.outbound import url_errors
from integrations.github import REPOSITORY
from integrations.models import DisabledReason

# Checked in validate_reviewer_login, not as a RegexField: the OpenAPI pattern drf-spectacular
# derives from it ("(\[bot]){0,1}") is one schema-driven clients (schemathesis) cannot use.
GITHUB_LOGIN = re.compile(r"[A-Za-z0-9-]+(\[bot\])?")


class CreatorFields(serializers.Serializer):
    """Whose authority a credential carries, and whether it still may act (integrations.credentials)."""

    created_by = serializers.CharField(
        source="created_by.username", default=None, read_only=True, help_text="null: made by an operator"
    )
    disabled_at = serializers.DateTimeField(read_only=True, allow_null=True)
    disabled_reason = serializers.ChoiceField(
        choices=DisabledReason.choices,
        read_only=True,
        allow_null=True,
        help_text="Why it stopped (null while it works); an owner's take-over enables it again.",
    )

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["disabled_reason"] = data["disabled_reason"] or None
        return data


class IntakeSerializer(CreatorFields):
    """The secret is never part of it: only the creation response adds it, once."""

    id = serializers.UUIDField(read_only=True)
    workflow_id = serializers.UUIDField()
    step_id = serializers.UUIDField(required=False, allow_null=True)
    name = serializers.CharField(required=False, allow_blank=True, max_length=200)
    url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField(read_only=True)

    def get_url(self, intake) -> str:
        return f"/hooks/{intake.pk}/"


class IntakeCreatedSerializer(IntakeSerializer):
    secret = serializers.CharField(read_only=True)


class ReviewWatchTakeOverSerializer(serializers.Serializer):
    token = serializers.CharField(
        allow_blank=True,
        max_length=500,
        help_text="The new owner's own token (blank: none, for public repositories); the former one is dropped.",
    )


class RepositoryField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=140, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not REPOSITORY.fullmatch(value):
            raise serializers.ValidationError("Enter an owner/repo name (as GitHub spells it).")
        return value


class ReviewWatchSerializer(CreatorFields):
    id = serializers.UUIDField(read_only=True)
    workflow_id = serializers.UUIDField()
    step_id = serializers.UUIDField(required=False, allow_null=True)
    repositories = serializers.ListField(child=RepositoryField(), min_length=1, max_length=50)
    reviewer_login = serializers.CharField(max_length=100, help_text="A GitHub login.")
    poll_interval_seconds = serializers.IntegerField(required=False, min_value=30, max_value=86_400)
    enabled = serializers.BooleanField(required=False)
    api_base_url = serializers.URLField(required=False, max_length=500)
    token = serializers.CharField(write_only=True, required=False, allow_blank=True, max_length=500)
    has_token = serializers.SerializerMethodField()
    last_polled_at = serializers.DateTimeField(read_only=True, allow_null=True)
    backoff_until = serializers.DateTimeField(read_only=True, allow_null=True)
    last_error = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)

    def validate_reviewer_login(self, value):
        if not GITHUB_LOGIN.fullmatch(value):
            raise serializers.ValidationError("Enter a GitHub login (letters, digits, -).")
        return value

    def get_has_token(self, watch) -> bool:
        return bool(watch.token_encrypted)

    def validate_api_base_url(self, value):
        problems = url_errors(value)
        if problems:
            raise serializers.ValidationError(problems)
        return value.rstrip("/")


class ReviewWatchUpdateSerializer(ReviewWatchSerializer):
    workflow_id = serializers.UUIDField(read_only=True)
    repositories = serializers.ListField(child=RepositoryField(), min_length=1, max_length=50, required=False)
    reviewer_login = serializers.CharField(max_length=100, required=False)
