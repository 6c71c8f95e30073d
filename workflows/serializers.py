from rest_framework import serializers

from common.text import clean_text
from workflows.models import OnFull, OnSessionLimit, StepKind, Workflow, Workspace
from workflows.step_rules import (
    COLOR,
    MAX_LANES,
    MAX_NAME,
    MAX_POSITION,
    MAX_STEPS,
    MAX_WIP_LIMIT,
    MIN_GROUP_STEPS,
)


class NameField(serializers.CharField):
    def __init__(self, **kwargs):
        super().__init__(max_length=MAX_NAME, **kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not value:
            raise serializers.ValidationError("This field may not be blank.")
        return clean_text(value)


class WorkspaceSerializer(serializers.ModelSerializer):
    name = NameField()
    slug = serializers.SlugField(max_length=100, required=False)
    role = serializers.SerializerMethodField()
    max_concurrent_sessions = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=1_000_000
    )

    class Meta:
        model = Workspace
        fields = ["id", "name", "slug", "max_concurrent_sessions", "role", "runner_seen_at", "created_at"]
        read_only_fields = ["id", "runner_seen_at", "created_at"]

    def get_role(self, workspace) -> str | None:
        roles = self.context.get("roles") or {}
        return roles.get(workspace.pk)

    def validate_slug(self, value):
        if Workspace.objects.filter(slug=value).exclude(pk=getattr(self.instance, "pk", None)).exists():
            raise serializers.ValidationError("This slug is taken.")
        return value


class WorkflowSerializer(serializers.ModelSerializer):
    workspace_id = serializers.UUIDField()
    name = NameField()
    description = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    max_parallel_sessions = serializers.IntegerField(required=False, min_value=0, max_value=1_000_000)
    on_session_limit = serializers.ChoiceField(choices=OnSessionLimit.choices, required=False)
    expedite_limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_WIP_LIMIT)
    template = serializers.CharField(write_only=True, required=False, max_length=50)

    class Meta:
        model = Workflow
        fields = [
            "id",
            "workspace_id",
            "name",
            "description",
            "max_parallel_sessions",
            "on_session_limit",
            "expedite_limit",
            "version",
            "created_at",
            "template",
        ]
        read_only_fields = ["id", "version", "created_at"]


class WorkflowUpdateSerializer(WorkflowSerializer):
    # Declared fields ignore Meta.read_only_fields: redeclare them. A PATCH must not move a
    # board into another workspace, and the template only applies at creation.
    workspace_id = serializers.UUIDField(read_only=True)
    template = None

    class Meta(WorkflowSerializer.Meta):
        fields = [f for f in WorkflowSerializer.Meta.fields if f != "template"]
        read_only_fields = ["id", "workspace_id", "version", "created_at"]


class StepSerializer(serializers.Serializer):
    """Step fields of the API. `occupied`, `queued`, `over_limit` are read-only."""

    id = serializers.UUIDField(read_only=True)
    workflow_id = serializers.UUIDField()
    name = NameField()
    position = serializers.IntegerField(required=False, min_value=0, max_value=MAX_POSITION)
    color = serializers.RegexField(f"^(?:{COLOR.pattern})$", required=False, max_length=32)
    kind = serializers.ChoiceField(choices=StepKind.choices, required=False)
    is_start_step = serializers.BooleanField(required=False)
    wip_limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_WIP_LIMIT)
    pull_from_step_id = serializers.UUIDField(required=False, allow_null=True)
    group_id = serializers.UUIDField(read_only=True, allow_null=True, help_text="Its step group, if any")
    on_full = serializers.ChoiceField(choices=OnFull.choices, required=False)
    # Checked by the service against the board (workflows.step_rules), where targets are known.
    events = serializers.JSONField(required=False)
    occupied = serializers.IntegerField(read_only=True)
    queued = serializers.IntegerField(read_only=True)
    over_limit = serializers.BooleanField(read_only=True)


class StepUpdateSerializer(StepSerializer):
    workflow_id = serializers.UUIDField(read_only=True)
    name = NameField(required=False)


class StepGroupSerializer(serializers.Serializer):
    """Step group fields of the API. `occupied` and `over_limit` are read-only;
    the service checks `step_ids` against the board (workflows.step_rules)."""

    id = serializers.UUIDField(read_only=True)
    workflow_id = serializers.UUIDField()
    name = NameField()
    wip_limit = serializers.IntegerField(min_value=1, max_value=MAX_WIP_LIMIT)
    step_ids = serializers.ListField(child=serializers.UUIDField(), min_length=MIN_GROUP_STEPS, max_length=MAX_STEPS)
    occupied = serializers.IntegerField(read_only=True)
    over_limit = serializers.BooleanField(read_only=True)


class StepGroupUpdateSerializer(StepGroupSerializer):
    workflow_id = serializers.UUIDField(read_only=True)


class LaneSerializer(serializers.Serializer):
    """Lane fields of the API. `occupied` (its live admitted tasks in active steps) and
    `over_limit` are read-only."""

    id = serializers.UUIDField(read_only=True)
    workflow_id = serializers.UUIDField()
    name = NameField()
    position = serializers.IntegerField(required=False, min_value=0, max_value=MAX_LANES)
    wip_limit = serializers.IntegerField(required=False, min_value=0, max_value=MAX_WIP_LIMIT, help_text="0: no limit")
    is_expedite = serializers.BooleanField(
        required=False, help_text="The board's expedite lane (at most one; shown first)"
    )
    occupied = serializers.IntegerField(read_only=True)
    over_limit = serializers.BooleanField(read_only=True)


class LaneUpdateSerializer(LaneSerializer):
    workflow_id = serializers.UUIDField(read_only=True)


class CellSerializer(serializers.Serializer):
    """A lane's limit in one step (0 on a PUT: none); `occupied`: the lane's tasks there."""

    step_id = serializers.UUIDField()
    wip_limit = serializers.IntegerField(min_value=0, max_value=MAX_WIP_LIMIT)
    lane_id = serializers.UUIDField(read_only=True)
    occupied = serializers.IntegerField(read_only=True)


class CellsSerializer(serializers.Serializer):
    """A PUT's body: every cell limit of the lane (steps left out have none)."""

    cells = CellSerializer(many=True, max_length=MAX_STEPS)


class TemplateSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    description = serializers.CharField()
    starts_agents = serializers.BooleanField(help_text="Whether a step of it starts an agent (needs a runner).")
    summary = serializers.CharField(help_text="Its steps, limits, pulls and agents in one line.")
    steps = serializers.ListField(child=serializers.DictField())


class PortableStepSerializer(serializers.Serializer):
    """A step of a portable document: its feeder and move_to_step targets are positions."""

    name = serializers.CharField()
    position = serializers.IntegerField()
    color = serializers.CharField()
    kind = serializers.ChoiceField(choices=StepKind.choices, required=False, help_text="active when absent")
    is_start_step = serializers.BooleanField()
    wip_limit = serializers.IntegerField()
    pull_from_step_position = serializers.IntegerField(allow_null=True)
    on_full = serializers.ChoiceField(choices=OnFull.choices)
    events = serializers.JSONField()


class PortableGroupSerializer(serializers.Serializer):
    """A step group of a portable document: its steps are positions."""

    name = serializers.CharField()
    wip_limit = serializers.IntegerField()
    step_positions = serializers.ListField(child=serializers.IntegerField())


class PortableWorkflowSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    max_parallel_sessions = serializers.IntegerField(required=False)
    on_session_limit = serializers.ChoiceField(choices=OnSessionLimit.choices, required=False)
    expedite_limit = serializers.IntegerField(required=False, help_text="1 when absent")
    steps = PortableStepSerializer(many=True)
    groups = PortableGroupSerializer(many=True, required=False)
    tasks = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Version 2: {title, description, step, step_position, priority, class_of_service, "
        "assignee, blocked_reason, blocked_type, archived, created_at}, live tasks in board order, then archived "
        "ones; version 3 adds lane_position, updated_at, started_at, entered_step_at, archived_at, blocked_at, "
        "queued_at and history: [{kind, from_step_position, to_step_position, actor, reason, at, detail}]",
    )


class PortableDocumentSerializer(serializers.Serializer):
    """`{version: 3, type: kandev_workflow, workflows: [...], people: [...]}`, YAML or JSON;
    version 1 (no tasks) and 2 (no history) documents still import."""

    version = serializers.IntegerField()
    type = serializers.CharField()
    workflows = PortableWorkflowSerializer(many=True)
    people = serializers.ListField(
        child=serializers.DictField(), required=False, help_text="{username, wip_limit}: the personal limits set"
    )


class ImportedWorkflowSerializer(WorkflowSerializer):
    steps = StepSerializer(many=True)
    groups = StepGroupSerializer(many=True)
    tasks = serializers.DictField(
        help_text='{"created", "queued", "forced", "archived", "refused", "unassigned"}: what became of its tasks'
    )

    class Meta(WorkflowSerializer.Meta):
        fields = [*WorkflowSerializer.Meta.fields, "steps", "groups", "tasks"]


class ImportResultSerializer(serializers.Serializer):
    workflows = ImportedWorkflowSerializer(many=True)
    people = serializers.DictField(
        help_text='{"applied", "kept", "skipped"}: usernames whose limit was given, already set, or not a member'
    )
