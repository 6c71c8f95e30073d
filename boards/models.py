import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower

from boards.priorities import Priority
from workflows.models import Lane, StepKind, Workflow, WorkflowStep, Workspace

# The rules about which tasks count, each written once here; the ledger (boards/occupancy.py),
# the querysets below and the hand-written SQL (boards/statements.py) derive from them.
LIVE = Q(archived_at__isnull=True, is_ephemeral=False)  # a step's live work: counted or queued
OCCUPYING = LIVE & Q(admitted=True)  # what counts toward a limit
QUEUED = LIVE & Q(admitted=False)  # waiting in a queue-mode step's overflow queue
# Board order inside a step (a sort key, then ties), the pull's (expedite first: "expedite"
# sorts before "standard") and a queue's (oldest first; a bulk move queues in one instant).
BOARD_ORDER = ("position", "priority", "created_at", "id")
PULL_ORDER = ("class_of_service", *BOARD_ORDER)
# A pull's order across lanes: expedite first, then the board's lane order, then board order.
LANE_PULL_ORDER = ("class_of_service", "lane__position", *BOARD_ORDER)
QUEUE_ORDER = ("queued_at", "position", "id")
BLOCKED_REASON_MAX = 2000
# A blocker holds its dependents back until it is finished: in a `done` step, or archived
# (deleting it deletes its links). Over a task's blockers, through the link.
UNFINISHED = Q(archived_at__isnull=True) & ~Q(step__kind=StepKind.DONE)
# Who may be given a task: an owner or member of its workspace.
NOT_ASSIGNABLE = "Not a member or owner of this workspace."
# A card's labels, checklist and their bounds.
LABEL_NAME_MAX = 40
LABELS_PER_WORKSPACE_MAX = 100
LABELS_PER_TASK_MAX = 20
CHECKLIST_TEXT_MAX = 500
# A workspace's list of blocker types (a block's cluster in the flow figures).
BLOCKER_TYPE_NAME_MAX = 60
BLOCKER_TYPES_PER_WORKSPACE_MAX = 50
CHECKLIST_ITEMS_MAX = 100


def empty_checklist() -> dict:
    return {"done": 0, "total": 0}


class LabelColor(models.TextChoices):
    """The label palette: each name has a background and text colour pair with a contrast
    of at least 4.5:1 in light and in dark mode (static/board/board.css, `.label-*`). A
    label is never its colour alone: its name is always shown and spoken."""

    GRAY = "gray"
    RED = "red"
    ORANGE = "orange"
    YELLOW = "yellow"
    GREEN = "green"
    TEAL = "teal"
    BLUE = "blue"
    PURPLE = "purple"
    PINK = "pink"


class Label(models.Model):
    """A name and a colour that the tasks of one workspace may carry, several per task."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="labels")
    name = models.CharField(max_length=LABEL_NAME_MAX)
    color = models.CharField(max_length=10, choices=LabelColor.choices, default=LabelColor.GRAY)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="one_label_name_per_workspace")]

    def __str__(self):
        return self.name


class BlockerType(models.Model):
    """A kind of block a workspace names (waiting on a vendor, a review, an environment):
    a block may carry one beside its free-text reason, and the flow figures group by it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="blocker_types")
    name = models.CharField(max_length=BLOCKER_TYPE_NAME_MAX)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Case aside: "Vendor" and "vendor" are one type.
            models.UniqueConstraint(Lower("name"), "workspace", name="one_blocker_type_name_per_workspace"),
        ]

    def __str__(self):
        return self.name


class ClassOfService(models.TextChoices):
    """Expedite work is admitted past the limits, within the board's `expedite_limit`."""

    # Sorted by value, "expedite" comes before "standard": the pull order uses that.
    STANDARD = "standard"
    EXPEDITE = "expedite"


class TaskQuerySet(models.QuerySet):
    def live(self):
        """Not archived and not ephemeral."""
        return self.filter(LIVE)

    def occupying(self):
        """What counts toward a step's WIP limit."""
        return self.filter(OCCUPYING)

    def queued(self):
        return self.filter(QUEUED)

    def in_board_order(self):
        return self.order_by(*BOARD_ORDER)

    def in_pull_order(self):
        """Expedite first, then lane order, then board order."""
        return self.order_by(*LANE_PULL_ORDER)

    def in_queue_order(self):
        return self.order_by(*QUEUE_ORDER)


def is_live(task) -> bool:
    """`LIVE`, for a task in memory."""
    return task.archived_at is None and not task.is_ephemeral


def occupies(task) -> bool:
    """`OCCUPYING`, for a task in memory: does it count toward a limit where it is?"""
    return is_live(task) and task.admitted


class Task(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="tasks")
    step = models.ForeignKey(WorkflowStep, on_delete=models.PROTECT, related_name="tasks")
    # Its row of the board: a lane of the same workflow (deleting a lane moves its tasks first).
    lane = models.ForeignKey(Lane, on_delete=models.PROTECT, related_name="tasks")
    title = models.CharField(max_length=500)
    description = models.TextField(blank=True)
    priority = models.PositiveSmallIntegerField(choices=Priority.choices, default=Priority.MEDIUM)
    # A sort key, not an index: spaced out (boards/placement.py), ties ordered by priority rank, created, id.
    position = models.PositiveBigIntegerField(default=0)
    archived_at = models.DateTimeField(null=True, blank=True)
    is_ephemeral = models.BooleanField(default=False)
    # False while waiting in a queue-mode step's overflow queue.
    admitted = models.BooleanField(default=True)
    queued_at = models.DateTimeField(null=True, blank=True)
    # Null, not "": uniqueness applies only to tasks that have a reference.
    external_ref = models.CharField(max_length=300, null=True, blank=True)  # noqa: DJ001
    # "" = not blocked. A blocked task keeps its slot but is never pulled.
    blocked_reason = models.CharField(max_length=BLOCKED_REASON_MAX, blank=True, default="")
    blocked_at = models.DateTimeField(null=True, blank=True)
    # The block's type, if it was given one (null when not blocked).
    blocked_type = models.ForeignKey(
        BlockerType, null=True, blank=True, on_delete=models.SET_NULL, related_name="tasks"
    )
    # A member or owner of the workspace; counted against their personal limit.
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="assigned_tasks"
    )
    class_of_service = models.CharField(max_length=10, choices=ClassOfService.choices, default=ClassOfService.STANDARD)
    # The ids (text, ascending) of its unfinished blockers: never pulled while any is left.
    # Kept by boards/dependencies.py in the change that finishes, reopens or links a blocker,
    # so a card, the API and the pull read it from the task's own row.
    blocked_by = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    entered_step_at = models.DateTimeField()
    # Its cycle's start: its first admission into an active step (boards/placement.py), set
    # once and never reset; null until then. A card's age against its service level.
    started_at = models.DateTimeField(null=True, blank=True)
    # The task's label ids (str, sorted), kept with `labels` in the same transaction: a card's
    # JSON is read from its own row, never a query per task.
    label_ids = models.JSONField(default=list, blank=True)
    labels = models.ManyToManyField(Label, blank=True, related_name="tasks")
    # A moment, or a whole day (`due_all_day`: the date of `due_at` in UTC, at midnight),
    # which every viewer reads as that date in their own time zone.
    due_at = models.DateTimeField(null=True, blank=True, db_index=True)
    due_all_day = models.BooleanField(default=False)
    # {"done", "total"} of its checklist items, kept with them in the same transaction.
    checklist = models.JSONField(default=empty_checklist)
    # Kept in the transaction that adds or deletes a comment, so the board reads it with the card.
    comment_count = models.PositiveIntegerField(default=0)
    # Kept by the attachment writes (boards/attachments.py) in their board change, so a card
    # shows its count with no query of its own.
    attachment_count = models.PositiveIntegerField(default=0, db_default=0)

    objects = TaskQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["workflow", "external_ref"],
                condition=Q(archived_at__isnull=True, external_ref__isnull=False),
                name="one_live_task_per_external_ref",
            ),
        ]
        indexes = [
            # A step's tasks in board order: a move's neighbours (ephemeral tasks are on the
            # board too), the occupancy count and the pull candidates.
            models.Index(
                fields=["step", *BOARD_ORDER],
                condition=Q(archived_at__isnull=True),
                name="task_in_board_order",
            ),
            # Pull candidates: expedite first, then board order.
            models.Index(
                fields=["step", *PULL_ORDER],
                condition=Q(archived_at__isnull=True, is_ephemeral=False, admitted=True),
                name="task_pull_order",
            ),
            # A person's occupancy across the workspace's boards.
            models.Index(
                fields=["assignee", "step"],
                condition=Q(archived_at__isnull=True, is_ephemeral=False, admitted=True, assignee__isnull=False),
                name="task_live_by_assignee",
            ),
        ]

    def __str__(self):
        return self.title

    @property
    def priority_name(self) -> str:
        return Priority(self.priority).label


class ChecklistItem(models.Model):
    """One line of a task's checklist, ticked or not, in `position` order."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="checklist_items")
    text = models.CharField(max_length=CHECKLIST_TEXT_MAX)
    done = models.BooleanField(default=False)
    position = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["position", "created_at", "id"]

    def __str__(self):
        return self.text


class EventKind(models.TextChoices):
    CREATED = "created"
    MOVED = "moved"
    PULLED = "pulled"
    PROMOTED = "promoted"
    QUEUED = "queued"
    ARCHIVED = "archived"
    RESTORED = "restored"
    DELETED = "deleted"
    FORCED = "forced"
    DEFERRED = "deferred"  # an engine transition refused by a full step: the task stayed
    SESSION = "session"  # an agent session was rejected by a limit, or forced past one
    BLOCKED = "blocked"  # the reason is the event's `reason`
    UNBLOCKED = "unblocked"
    EXPEDITED = "expedited"  # an expedite task admitted past a full limit
    ASSIGNED = "assigned"  # the assignee changed (detail: assignee_id, previous)
    CLASSIFIED = "classified"  # the class of service changed (detail: class_of_service)
    LABELED = "labeled"  # the labels changed (detail: label_ids, added, removed)
    DUE = "due"  # the due date was set or cleared (detail: due_at, due_all_day)
    LINKED = "linked"  # a blocker was linked to this task (detail: blocker_id, link_id)
    UNLINKED = "unlinked"  # a blocker's link to this task was removed (detail: blocker_id)
    IMPORTED = "imported"  # brought in by a backup without its history: where the history starts


def unfinished(task, step: WorkflowStep) -> bool:
    """`UNFINISHED`, for a task in memory in `step`."""
    return task.archived_at is None and step.kind != StepKind.DONE


class TaskLink(models.Model):
    """`blocker` blocks `dependent`: the dependent is never pulled while the blocker is
    unfinished. Both are tasks of one workspace (boards may differ); the links never form a
    cycle (boards/dependencies.py decides, under the workspace's link guard)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    blocker = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="blocking_links")
    dependent = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="blocker_links")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["blocker", "dependent"], name="one_link_per_pair"),
            models.CheckConstraint(condition=~Q(blocker=models.F("dependent")), name="link_not_to_itself"),
        ]

    def __str__(self):
        return f"{self.blocker_id} blocks {self.dependent_id}"


class TaskEvent(models.Model):
    """Append-only history of a board: audit trail and flow metrics.

    Task and steps are referenced without database constraints so the history
    outlives deleted tasks and steps.
    """

    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="task_events")
    task = models.ForeignKey(Task, on_delete=models.DO_NOTHING, db_constraint=False, related_name="events")
    kind = models.CharField(max_length=12, choices=EventKind.choices)
    from_step = models.ForeignKey(
        WorkflowStep, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    to_step = models.ForeignKey(
        WorkflowStep, null=True, blank=True, on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.TextField(blank=True)
    at = models.DateTimeField(auto_now_add=True, db_index=True)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(fields=["workflow", "id"], name="taskevent_by_workflow"),
            # The activity feed: a board's history, newest first.
            models.Index(fields=["workflow", "-at", "-id"], name="taskevent_feed"),
        ]

    def __str__(self):
        return f"{self.kind} {self.task_id}"


COMMENT_BODY_MAX = 10_000


class Comment(models.Model):
    """A person's Markdown note on a task; deleted with its task. `mentions` are the workspace
    members its `@username`s named when it was written or last edited."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="comments")
    # The task's board, kept beside it so the activity feed reads a board's comments by index.
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    body = models.TextField(max_length=COMMENT_BODY_MAX)
    created_at = models.DateTimeField()
    edited_at = models.DateTimeField(null=True, blank=True)
    mentions = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="+")

    class Meta:
        indexes = [
            models.Index(fields=["task", "created_at"], name="comment_by_task"),
            models.Index(fields=["workflow", "-created_at", "-id"], name="comment_feed"),
        ]

    def __str__(self):
        return f"comment on {self.task_id}"


class Attachment(models.Model):
    """A file attached to a task. `file` is where the storage keeps it, under a name kandev
    chose (boards/attachments.py); `name` is the uploader's file name, cleaned, for people."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="attachments")
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    content_type = models.CharField(max_length=255)
    file = models.FileField(max_length=255)
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["task", "created_at", "id"], name="attachment_by_task")]

    def __str__(self):
        return self.name
