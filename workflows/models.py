import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q


class Role(models.TextChoices):
    OWNER = "owner"
    MEMBER = "member"
    VIEWER = "viewer"


class Workspace(models.Model):
    """A team: its members share its boards."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    # Null: use the setting default; 0: unlimited.
    max_concurrent_sessions = models.PositiveIntegerField(null=True, blank=True)
    # When a runner last asked for work here (at most RUNNER_SEEN_EVERY apart): the board
    # tells its people when sessions wait and no runner has been seen.
    runner_seen_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces")

    def __str__(self):
        return self.name

    @property
    def session_limit(self) -> int:
        """The concurrent agent sessions this workspace allows: 0 = unlimited."""
        if self.max_concurrent_sessions is None:
            return settings.KANDEV_MAX_CONCURRENT_SESSIONS_PER_WORKSPACE
        return self.max_concurrent_sessions


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.MEMBER)
    # A personal WIP limit over the workspace's active steps; 0 = none.
    wip_limit = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")]

    def __str__(self):
        return f"{self.user} is {self.role} of {self.workspace}"


class OnSessionLimit(models.TextChoices):
    QUEUE = "queue"
    REJECT = "reject"


class Workflow(models.Model):
    """One board. `version` counts committed changes; its row lock orders them."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="workflows")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    max_parallel_sessions = models.PositiveIntegerField(default=0)
    on_session_limit = models.CharField(max_length=10, choices=OnSessionLimit.choices, default=OnSessionLimit.QUEUE)
    version = models.PositiveBigIntegerField(default=0)
    # How many expedite tasks may be admitted past the limits at once.
    expedite_limit = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return self.name


class OnFull(models.TextChoices):
    REJECT = "reject"
    QUEUE = "queue"


class StepKind(models.TextChoices):
    """What a step means to flow metrics and personal limits."""

    BACKLOG = "backlog"
    ACTIVE = "active"
    DONE = "done"


class StepGroup(models.Model):
    """A limit shared by several steps of one board (CONWIP)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="step_groups")
    name = models.CharField(max_length=200)
    wip_limit = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return self.name


def empty_events():
    return {"on_enter": [], "on_turn_complete": [], "on_exit": []}


class WorkflowStep(models.Model):
    """A column. `wip_limit` 0 means unlimited; `pull_from_step` is its feeder."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="steps")
    name = models.CharField(max_length=200)
    position = models.PositiveIntegerField()
    color = models.CharField(max_length=32, blank=True, default="#64748b")
    kind = models.CharField(max_length=10, choices=StepKind.choices, default=StepKind.ACTIVE)
    is_start_step = models.BooleanField(default=False)
    wip_limit = models.PositiveIntegerField(default=0)
    pull_from_step = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="fed_steps"
    )
    on_full = models.CharField(max_length=10, choices=OnFull.choices, default=OnFull.REJECT)
    events = models.JSONField(default=empty_events, blank=True)
    # A step is in at most one group; the group's `step_ids` are derived from this.
    group = models.ForeignKey(StepGroup, null=True, blank=True, on_delete=models.SET_NULL, related_name="steps")

    class Meta:
        ordering = ["workflow", "position"]
        constraints = [
            models.UniqueConstraint(fields=["workflow", "position"], name="one_step_per_position"),
            models.UniqueConstraint(
                fields=["workflow"], condition=Q(is_start_step=True), name="one_start_step_per_workflow"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def is_limited(self) -> bool:
        return self.wip_limit > 0

    @property
    def is_active(self) -> bool:
        return self.kind == StepKind.ACTIVE

    def actions(self, event: str) -> list[dict]:
        return list((self.events or {}).get(event) or [])


class LimitScope(models.TextChoices):
    """What a recorded configuration change applies to."""

    STEP = "step"
    GROUP = "group"
    PERSON = "person"
    BOARD = "board"  # the board's own settings: the expedite allowance
    LANE = "lane"
    CELL = "cell"  # one lane in one step: its subject is "<lane id>:<step id>"


class ConfigChange(models.Model):
    """The configuration history: one setting of one step, group, person or board, before
    and after a change, written in the change's transaction. The flow figures judge a past
    instant by what was in force then. A person's limit belongs to the workspace (its
    rows have no workflow). `subject_id` and `name` are copied: the history outlives
    deleted steps and groups. A starting row (the configuration found when the history
    began) has `before` equal to `after`."""

    id = models.BigAutoField(primary_key=True)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    workflow = models.ForeignKey(Workflow, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    scope = models.CharField(max_length=10, choices=LimitScope.choices)
    subject_id = models.CharField(max_length=80)  # a cell's is "<lane id>:<step id>"
    name = models.CharField(max_length=200)
    field = models.CharField(max_length=32)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField()

    class Meta:
        ordering = ["at", "id"]
        indexes = [
            models.Index(fields=["workflow", "at", "id"], name="configchange_by_board"),
            models.Index(fields=["workspace", "scope", "at"], name="configchange_by_workspace"),
        ]

    def __str__(self):
        return f"{self.scope} {self.name}: {self.field} {self.before} -> {self.after}"


class Lane(models.Model):
    """A row of a board: every task is in exactly one. `wip_limit` (0: none) caps its live
    admitted tasks in active steps; at most one lane of a board is the expedite lane."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="lanes")
    name = models.CharField(max_length=200)
    position = models.PositiveIntegerField()
    wip_limit = models.PositiveIntegerField(default=0)
    is_expedite = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workflow", "position", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["workflow"], condition=Q(is_expedite=True), name="one_expedite_lane_per_workflow"
            ),
        ]

    def __str__(self):
        return self.name


def create_first_lane(workflow: Workflow, name: str = "Default") -> Lane:
    """Every board has at least one lane: each door that makes a board makes its first."""
    return Lane.objects.create(workflow=workflow, name=name, position=0)


class LaneCell(models.Model):
    """The limit of one lane in one step (a cell of the board): at most `wip_limit` of the
    lane's live admitted tasks in that step. No row: no cell limit."""

    lane = models.ForeignKey(Lane, on_delete=models.CASCADE, related_name="cells")
    step = models.ForeignKey(WorkflowStep, on_delete=models.CASCADE, related_name="+")
    wip_limit = models.PositiveIntegerField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["lane", "step"], name="one_cell_per_lane_and_step")]

    def __str__(self):
        return f"{self.lane} × {self.step}"
