from rest_framework import serializers

from common.outbound import url_errors
from notifications.models import Notification, Webhook
from notifications.webhooks import EVENT_TYPES


class NotificationSerializer(serializers.ModelSerializer):
    actor = serializers.SerializerMethodField(help_text="The username of whoever caused it (null: kandev).")
    read = serializers.SerializerMethodField()
    title = serializers.SerializerMethodField(help_text="The task's title when the news was made.")

    class Meta:
        model = Notification
        fields = ["id", "kind", "task_id", "workflow_id", "actor", "at", "read", "title", "detail"]

    def get_actor(self, item) -> str | None:
        return item.actor.get_username() if item.actor is not None else None

    def get_read(self, item) -> bool:
        return item.read_at is not None

    def get_title(self, item) -> str:
        return item.detail.get("title", "")


class MarkReadSerializer(serializers.Serializer):
    ids = serializers.ListField(child=serializers.IntegerField(min_value=1), required=False, max_length=1000)
    all = serializers.BooleanField(required=False)

    def validate(self, data):
        if data.get("all") is True and "ids" not in data:
            return data
        if "ids" in data and not data.get("all"):
            return data
        raise serializers.ValidationError({"ids": ['Send {"ids": [...]} or {"all": true}.']})


class MarkedSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many were unread and are read now.")
    unread = serializers.IntegerField(help_text="Your unread count now.")


class WatchingSerializer(serializers.Serializer):
    task_id = serializers.UUIDField()
    watching = serializers.BooleanField()


class WebhookSerializer(serializers.ModelSerializer):
    """The secret is never part of it: only the creation response adds it, once."""

    workspace_id = serializers.UUIDField()
    url = serializers.CharField(max_length=2000)
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=EVENT_TYPES), min_length=1, max_length=len(EVENT_TYPES)
    )
    created_by = serializers.SerializerMethodField()
    disabled_reason = serializers.CharField(
        read_only=True,
        help_text='Why it stopped ("creator_not_owner", "creator_removed", "creator_deactivated"); "" while on.',
    )
    last_delivery = serializers.JSONField(read_only=True, help_text="status, attempt, response_code, at, error, event")

    class Meta:
        model = Webhook
        fields = [
            "id",
            "workspace_id",
            "url",
            "events",
            "created_by",
            "created_at",
            "disabled_at",
            "disabled_reason",
            "last_delivery",
        ]
        read_only_fields = ["id", "created_at", "disabled_at", "disabled_reason"]

    def get_created_by(self, webhook) -> str | None:
        return webhook.created_by.get_username() if webhook.created_by is not None else None

    def validate_url(self, value):
        if problems := url_errors(value):
            raise serializers.ValidationError(problems)
        return value


class WebhookUpdateSerializer(WebhookSerializer):
    workspace_id = serializers.UUIDField(read_only=True)

    class Meta(WebhookSerializer.Meta):
        extra_kwargs = {"url": {"required": False}, "events": {"required": False}}


class WebhookCreatedSerializer(WebhookSerializer):
    secret = serializers.CharField(read_only=True, help_text="Shown once; store it now.")

    class Meta(WebhookSerializer.Meta):
        fields = [*WebhookSerializer.Meta.fields, "secret"]
