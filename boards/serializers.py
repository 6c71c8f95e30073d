import copy

from rest_framework import serializers

from boards.card_serializers import DueField, LabelIdsField
from boards.messages import task_data
from boards.models import BLOCKED_REASON_MAX, NOT_ASSIGNABLE, ClassOfService, EventKind, Priority, Task, TaskEvent
from common.text import clean_text
from workflows import access

PRIORITY_CHOICES = [p.label for p in Priority]


class TaskSerializer(serializers.Serializer):
    """Output shape of a task."""

    id = serializers.UUIDField(read_only=True)
    workflow_id = serializers.UUIDField(read_only=True)
    step_id = serializers.UUIDField(read_only=True)
    lane_id = serializers.UUIDField(read_only=True)
    title = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    priority = serializers.ChoiceField(choices=PRIORITY_CHOICES, read_only=True)
    position = serializers.IntegerField(read_only=True)
    admitted = serializers.BooleanField(read_only=True)
    queued_at = serializers.DateTimeField(read_only=True, allow_null=True)
    archived_at = serializers.DateTimeField(read_only=True, allow_null=True)
    is_ephemeral = serializers.BooleanField(read_only=True)
    external_ref = serializers.CharField(read_only=True, allow_null=True)
    assignee_id = serializers.IntegerField(read_only=True, allow_null=True)
    class_of_service = serializers.ChoiceField(choices=ClassOfService.choices, read_only=True)
    blocked_reason = serializers.CharField(read_only=True)
    blocked_at = serializers.DateTimeField(read_only=True, allow_null=True)
    blocked_type_id = serializers.UUIDField(read_only=True, allow_null=True, help_text="Its block's type, if any")
    blocked_by = serializers.ListField(
        child=serializers.UUIDField(), read_only=True, help_text="Ids of its unfinished blockers."
    )
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)
    entered_step_at = serializers.DateTimeField(read_only=True)
    started_at = serializers.DateTimeField(
        read_only=True, allow_null=True, help_text="Its first admission into an active step: its cycle's start"
    )
    label_ids = serializers.ListField(child=serializers.UUIDField(), read_only=True)
    due_at = serializers.DateTimeField(read_only=True, allow_null=True)
    due_all_day = serializers.BooleanField(read_only=True)
    checklist = serializers.JSONField(read_only=True, help_text='{"done": n, "total": n} of its checklist items')
    comment_count = serializers.IntegerField(read_only=True)
    attachment_count = serializers.IntegerField(read_only=True)

    def to_representation(self, instance: Task) -> dict:
        return task_data(instance)


class DatesAtConfidence(serializers.Serializer):
    """A date at 50% and at 85% confidence; null when beyond the forecast's reach."""

    def get_fields(self):
        return {p: serializers.DateField(allow_null=True) for p in ("50", "85")}


class TaskForecastSerializer(serializers.Serializer):
    starts_by = DatesAtConfidence()
    done_by = DatesAtConfidence()


class TaskSleSerializer(serializers.Serializer):
    days = serializers.IntegerField(help_text="85% of its class of service finish within this many days")
    age_days = serializers.FloatField(help_text="Days since its cycle started (its first active step)")
    past = serializers.BooleanField(help_text="Older than its service level")


class TaskDetailSerializer(TaskSerializer):
    """The task detail: also why it waits, its outlook, and whether you watch it."""

    waiting = serializers.JSONField(read_only=True, allow_null=True)
    forecast = TaskForecastSerializer(
        read_only=True,
        allow_null=True,
        help_text="A waiting task: when it will likely start and be done (null without enough history)",
    )
    sle = TaskSleSerializer(
        read_only=True, allow_null=True, help_text="A task in an active step: its age against its SLE"
    )
    watching = serializers.BooleanField(
        read_only=True, required=False, help_text="On the task detail: whether you watch the task."
    )


class TitleField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=500, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value:
            raise serializers.ValidationError("This field may not be blank.")
        return clean_text(value)


class PriorityField(serializers.ChoiceField):
    def __init__(self, **kwargs):
        super().__init__(choices=PRIORITY_CHOICES, **kwargs)

    def to_internal_value(self, data):
        return Priority.from_name(super().to_internal_value(data))


class AssigneeField(serializers.IntegerField):
    """A user id, or null for nobody."""

    def __init__(self, **kwargs):
        super().__init__(allow_null=True, min_value=1, max_value=2**31 - 1, **kwargs)


def check_assignee(workspace_id, assignee_id) -> None:
    """The early answer, as a field error; the admission decides it again under the membership's
    lock (BoardChange.assignable), with the same message."""
    if assignee_id is not None and not access.assignable(workspace_id, assignee_id):
        raise serializers.ValidationError({"assignee_id": [NOT_ASSIGNABLE]})


class ForceMixin(serializers.Serializer):
    force = serializers.BooleanField(default=False)
    reason = serializers.CharField(default="", allow_blank=True, max_length=2000)

    def get_fields(self):
        """Shallow copies of the declared fields, not DRF's deep copies, which build every
        field again on every request (most of a create's validation CPU). Each copy is bound
        to this serializer; these fields keep nothing else of a request."""
        return {name: copy.copy(field) for name, field in self._declared_fields.items()}


class TaskCreateSerializer(ForceMixin):
    workflow_id = serializers.UUIDField(required=False)
    step_id = serializers.UUIDField(required=False, allow_null=True)
    title = TitleField()
    description = serializers.CharField(default="", allow_blank=True, max_length=100_000)
    priority = PriorityField(required=False)
    position = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=2_000_000_000)
    is_ephemeral = serializers.BooleanField(default=False)
    external_ref = serializers.CharField(required=False, allow_null=True, max_length=300)
    assignee_id = AssigneeField(required=False)
    class_of_service = serializers.ChoiceField(choices=ClassOfService.choices, default=ClassOfService.STANDARD)
    lane_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="Its lane; the board's first when left out."
    )

    def validate_description(self, value):
        return clean_text(value, multiline=True)

    def validate(self, attrs):
        """Also where the task goes (`workflow`, `step`: `access.placement` for the context's
        `user`), and whether its assignee may have it there."""
        if not attrs.get("workflow_id") and not attrs.get("step_id"):
            raise serializers.ValidationError({"workflow_id": ["Give workflow_id, step_id, or both."]})
        workflow, step = access.placement(
            self.context["user"], workflow_id=attrs.get("workflow_id"), step_id=attrs.get("step_id")
        )
        check_assignee(workflow.workspace_id, attrs.get("assignee_id"))
        return {**attrs, "workflow": workflow, "step": step}


class TaskUpdateSerializer(serializers.Serializer):
    """A card's edit; an assignee is checked against the context's `workspace_id`."""

    title = TitleField(required=False)
    description = serializers.CharField(required=False, allow_blank=True, max_length=100_000)
    priority = PriorityField(required=False)
    assignee_id = AssigneeField(required=False)
    class_of_service = serializers.ChoiceField(choices=ClassOfService.choices, required=False)
    label_ids = LabelIdsField(required=False)  # the task's labels, all of them
    due_at = DueField(required=False)
    lane_id = serializers.UUIDField(required=False, help_text="Another lane of its board: a move within its step.")

    def validate_description(self, value):
        return clean_text(value, multiline=True)

    def validate(self, attrs):
        if "assignee_id" in attrs:
            check_assignee(self.context["workspace_id"], attrs["assignee_id"])
        if "due_at" in attrs:
            attrs["due_at"], attrs["due_all_day"] = attrs["due_at"] or (None, False)
        return attrs


class TaskMoveSerializer(ForceMixin):
    step_id = serializers.UUIDField()
    lane_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="The lane it moves to; its own when left out."
    )
    position = serializers.IntegerField(required=False, allow_null=True, min_value=0, max_value=2_000_000_000)


class BulkMoveSerializer(serializers.Serializer):
    task_ids = serializers.ListField(child=serializers.UUIDField(), min_length=1, max_length=1000)
    step_id = serializers.UUIDField()


class RestoreSerializer(ForceMixin):
    pass


class BlockSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=BLOCKED_REASON_MAX)
    blocked_type_id = serializers.UUIDField(
        required=False, allow_null=True, help_text="A blocker type of the task's workspace; omit for none"
    )

    def validate_reason(self, value):
        return clean_text(value, multiline=True)


class TaskEventSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField(read_only=True)
    from_step_id = serializers.UUIDField(read_only=True, allow_null=True)
    to_step_id = serializers.UUIDField(read_only=True, allow_null=True)
    actor = serializers.SerializerMethodField()
    kind = serializers.ChoiceField(choices=EventKind.choices, read_only=True)

    class Meta:
        model = TaskEvent
        fields = ["id", "kind", "task_id", "from_step_id", "to_step_id", "actor", "reason", "at", "detail"]

    def get_actor(self, event) -> str | None:
        return event.actor.username if event.actor_id else None
