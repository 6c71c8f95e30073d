"""What a card carries besides its admission fields, as the API reads and writes it: labels,
blocker types, a due date and checklist items."""

import datetime

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from boards.blocker_types import blocker_type_data
from boards.messages import label_data
from boards.models import (
    BLOCKER_TYPE_NAME_MAX,
    CHECKLIST_ITEMS_MAX,
    CHECKLIST_TEXT_MAX,
    LABEL_NAME_MAX,
    LABELS_PER_TASK_MAX,
    LabelColor,
)
from common.text import clean_text

DUE_HELP = 'A date ("2026-12-05": due that whole day, in each viewer\'s time zone) or a moment with its offset.'


def parse_due(value: str) -> tuple[datetime.datetime, bool]:
    """(`due_at`, `due_all_day`) of a date or a moment, as `DueField` reads them; a ValueError
    for anything else. A whole day is kept as midnight UTC of that date."""
    if len(value) == 10:
        day = datetime.date.fromisoformat(value)
        return datetime.datetime.combine(day, datetime.time(), tzinfo=datetime.UTC), True
    moment = datetime.datetime.fromisoformat(value)
    if timezone.is_naive(moment):
        raise ValueError("a moment needs its offset")
    return moment.astimezone(datetime.UTC), False


@extend_schema_field(OpenApiTypes.STR)  # a date or a date-time: one string either way
class DueField(serializers.Field):
    """A due date: a date, or a moment with its offset; null clears it."""

    default_error_messages = {"invalid": DUE_HELP}

    def __init__(self, **kwargs):
        super().__init__(allow_null=True, help_text=DUE_HELP, **kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, str) or len(data) > 40:
            self.fail("invalid")
        try:
            return parse_due(data)
        except ValueError:
            self.fail("invalid")

    def to_representation(self, value):
        return value


class LabelIdsField(serializers.ListField):
    def __init__(self, **kwargs):
        super().__init__(child=serializers.UUIDField(), max_length=LABELS_PER_TASK_MAX, **kwargs)


class NameField(serializers.CharField):
    def to_internal_value(self, data):
        return clean_text(super().to_internal_value(data))  # trimmed, never blank


class LabelNameField(NameField):
    def __init__(self, **kwargs):
        super().__init__(max_length=LABEL_NAME_MAX, **kwargs)


class LabelSerializer(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    workspace_id = serializers.UUIDField()
    name = LabelNameField()
    color = serializers.ChoiceField(choices=LabelColor.choices, default=LabelColor.GRAY)

    def to_representation(self, instance):
        return label_data(instance)


class LabelUpdateSerializer(serializers.Serializer):
    name = LabelNameField(required=False)
    color = serializers.ChoiceField(choices=LabelColor.choices, required=False)


class BlockerTypeSerializer(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    workspace_id = serializers.UUIDField()
    name = NameField(max_length=BLOCKER_TYPE_NAME_MAX)

    def to_representation(self, instance):
        return blocker_type_data(instance)


class BlockerTypeRenameSerializer(serializers.Serializer):
    name = NameField(max_length=BLOCKER_TYPE_NAME_MAX)


class ItemTextField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=CHECKLIST_TEXT_MAX, **kwargs)

    def to_internal_value(self, data):
        return clean_text(super().to_internal_value(data))


class ChecklistItemSerializer(serializers.Serializer):
    id = serializers.UUIDField(read_only=True)
    task_id = serializers.UUIDField(read_only=True)
    text = ItemTextField()
    done = serializers.BooleanField(read_only=True)
    position = serializers.IntegerField(read_only=True)


class ChecklistItemUpdateSerializer(serializers.Serializer):
    text = ItemTextField(required=False)
    done = serializers.BooleanField(required=False)
    position = serializers.IntegerField(required=False, min_value=0, max_value=CHECKLIST_ITEMS_MAX)


def item_data(item) -> dict:
    return {
        "id": str(item.pk),
        "task_id": str(item.task_id),
        "text": item.text,
        "done": item.done,
        "position": item.position,
    }
