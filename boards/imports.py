"""Tasks brought in from a document (a kandev export, a CSV file, a Trello board): read,
checked and admitted through the one admission rule (boards/placement.py's `decide`).

Every format turns its rows into `ImportedTask`s with `read_task()`, which collects each
row's field errors under the row's path (`tasks[3].priority`, `rows[7].title`); a document
with any error is refused whole (400) before anything is written. `place()` then admits the
rows into a locked board in one change, each as a create would be: admitted, queued
(queue-mode step), expedited, forced (only when the importer asked for it) or refused by a
full limit. Archived rows are written archived: they occupy nothing and need no admission.
"""

import datetime
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from rest_framework import serializers

from boards.blocker_types import block_detail, types_named
from boards.card_import import attach_card_fields, read_card_fields
from boards.change import BoardChange
from boards.changes import board_change
from boards.comments import ImportedComment, insert_imported
from boards.models import (
    BLOCKED_REASON_MAX,
    BLOCKER_TYPE_NAME_MAX,
    COMMENT_BODY_MAX,
    NOT_ASSIGNABLE,
    ClassOfService,
    EventKind,
    Priority,
    Task,
)
from boards.placement import Outcome, after_admission, decide, enter, event_kind
from boards.priorities import PRIORITY_RANKS
from common import sql
from common.errors import Invalid, QuotaExceeded, WipLimitReached
from common.text import clean_text
from workflows.access import assignable
from workflows.models import Membership, StepKind, Workflow, WorkflowStep, create_first_lane
from workflows.portable import build_steps

MAX_TITLE = 500
MAX_DESCRIPTION = 100_000
MAX_COMMENTS = 1000  # per task; the document's size bounds the rest


@dataclass
class ImportedTask:
    row: str  # where the row is in its document, for errors and refusals
    step: WorkflowStep
    title: str
    description: str = ""
    priority: int = Priority.MEDIUM
    class_of_service: str = ClassOfService.STANDARD
    assignee_id: int | None = None
    blocked_reason: str = ""
    blocked_type: str = ""  # a blocker type's name (boards/blocker_types.py), kept only with a reason
    archived: bool = False
    created_at: datetime.datetime | None = None
    ref: object = None  # how a refusal names the row, when not by `row` (a CSV file: its line)
    # A card's fields (boards/card_import.py): labels as (name, colour), items as (text, done).
    due_at: datetime.datetime | None = None
    due_all_day: bool = False
    labels: list = field(default_factory=list)
    checklist: list = field(default_factory=list)
    comments: list = field(default_factory=list)  # ImportedComments, oldest first
    id: object = None  # the id its task is given (a backup's links name it before it exists)
    blocked_by: list = field(default_factory=list)  # its unfinished blockers' ids (a backup's links)
    # A backup's: the lane by position, the task's own times ({field: instant}, kept as they
    # were) and its history (TaskEvents without their task; None: record what the import does).
    lane_position: int | None = None
    times: dict = field(default_factory=dict)
    history: list | None = None


@dataclass
class ImportResult:
    """What an import did; `refused` lists the rows a full limit turned away."""

    workflow_id: object = None
    created: int = 0
    queued: int = 0
    forced: int = 0
    archived: int = 0
    refused: list = field(default_factory=list)

    def as_body(self) -> dict:
        return {
            "workflow_id": None if self.workflow_id is None else str(self.workflow_id),
            "created": self.created,
            "queued": self.queued,
            "forced": self.forced,
            "archived": self.archived,
            "refused": self.refused,
        }


def max_tasks() -> int:
    return settings.KANDEV_MAX_IMPORT_TASKS


def check_count(count: int, path: str) -> None:
    """A document brings at most KANDEV_MAX_IMPORT_TASKS tasks: checked before any row is read."""
    if count > max_tasks():
        raise Invalid(
            {path: [f"An import brings at most {max_tasks()} tasks; this one has {count}."]},
            detail="The document is too large to import; nothing was imported.",
        )


class TaskReader:
    """Reads rows into ImportedTasks for one workspace, collecting every row's errors."""

    def __init__(self, workspace_id, *, unassign_strangers: bool = False):
        self.workspace_id = workspace_id
        self.errors: dict[str, list[str]] = {}
        # A backup brought to another workspace names people who are not in it: its tasks
        # come in unassigned, the rows listed (`unassigned`), rather than the import refused.
        self.unassign_strangers = unassign_strangers
        self.unassigned: list[str] = []
        self._users: dict[str, int | None] = {}

    def error(self, key: str, message: str) -> None:
        self.errors.setdefault(key, []).append(message)

    def read(self, row: str, step: WorkflowStep | None, values: dict) -> ImportedTask | None:
        """An ImportedTask of `values` (title, description, priority, class_of_service,
        assignee (a username), blocked_reason, blocked_type (a name), archived, created_at, and a card's labels,
        due_at and checklist), or None with its errors
        recorded. Absent or empty values take a create's defaults."""
        before = len(self.errors)
        title = self._text(row, "title", values.get("title"), MAX_TITLE, required=True)
        description = self._text(row, "description", values.get("description"), MAX_DESCRIPTION, multiline=True)
        blocked = self._text(row, "blocked_reason", values.get("blocked_reason"), BLOCKED_REASON_MAX)
        blocked_type = self._text(row, "blocked_type", values.get("blocked_type"), BLOCKER_TYPE_NAME_MAX)
        priority = values.get("priority") or "medium"
        if not isinstance(priority, str) or priority.strip().lower() not in PRIORITY_RANKS:
            self.error(f"{row}.priority", f"Must be one of {', '.join(PRIORITY_RANKS)}.")
            priority = "medium"
        service = values.get("class_of_service") or ClassOfService.STANDARD
        if service not in ClassOfService.values:
            self.error(f"{row}.class_of_service", 'Must be "standard" or "expedite".')
        archived = values.get("archived", False)
        if not isinstance(archived, bool):
            self.error(f"{row}.archived", "Must be true or false.")
        created_at = self._instant(row, values.get("created_at"))
        assignee_id = self._assignee(row, values.get("assignee"))
        card_fields = read_card_fields(self, row, values)
        comments = self._comments(row, values.get("comments"))
        if step is None or len(self.errors) > before:
            return None
        return ImportedTask(
            row=row,
            step=step,
            title=title,
            description=description,
            priority=PRIORITY_RANKS[priority.strip().lower()],
            class_of_service=service,
            assignee_id=assignee_id,
            blocked_reason=blocked,
            blocked_type=blocked_type if blocked else "",
            archived=archived,
            created_at=created_at,
            **card_fields,
            comments=comments,
        )

    def check(self, detail: str = "The document is invalid; nothing was imported.") -> None:
        if self.errors:
            raise Invalid(self.errors, detail=detail)

    def _text(self, row, name, value, maximum, *, required=False, multiline=False) -> str:
        if value is None:
            value = ""
        if not isinstance(value, str):
            self.error(f"{row}.{name}", "Must be text.")
            return ""
        value = value.strip() if not multiline else value
        if required and not value.strip():
            self.error(f"{row}.{name}", "This field may not be blank.")
        elif len(value) > maximum:
            self.error(f"{row}.{name}", f"Ensure this field has no more than {maximum} characters.")
        else:
            try:
                return clean_text(value, multiline=multiline)
            except serializers.ValidationError as exc:
                self.error(f"{row}.{name}", str(exc.detail[0]))
        return ""

    def _comments(self, row, value) -> list[ImportedComment]:
        """A task's comments: [{body, author (a username), created_at, edited_at}]. An author
        who is not a member here is named in the body instead (the comment is nobody's)."""
        if value in (None, ""):
            return []
        if not isinstance(value, list):
            self.error(f"{row}.comments", "Must be a list of comments.")
            return []
        if len(value) > MAX_COMMENTS:
            self.error(f"{row}.comments", f"A task brings at most {MAX_COMMENTS} comments.")
            return []
        comments = []
        for k, doc in enumerate(value):
            at = f"{row}.comments[{k}]"
            if not isinstance(doc, dict):
                self.error(at, "Must be a mapping with body, author and created_at.")
                continue
            body = self._text(at, "body", doc.get("body"), COMMENT_BODY_MAX, required=True, multiline=True)
            author = doc.get("author")
            if author is not None and not isinstance(author, str):
                self.error(f"{at}.author", "Must be a username.")
                author = None
            author_id = self._member(author) if author else None
            if author and author_id is None:
                body = f"**{author}** wrote:\n\n{body}"
            created_at, edited_at = self._instant(at, doc.get("created_at")), self._instant(at, doc.get("edited_at"))
            comments.append(ImportedComment(author_id, body, created_at, edited_at))
        return comments

    def _member(self, username: str) -> int | None:
        """A member's (any role) user id, by username."""
        key = f"member:{username}"
        if key not in self._users:
            members = Membership.objects.filter(workspace_id=self.workspace_id, user__username=username)
            self._users[key] = members.values_list("user_id", flat=True).first()
        return self._users[key]

    def _instant(self, row, value, name="created_at") -> datetime.datetime | None:
        if value in (None, ""):
            return None
        if isinstance(value, datetime.datetime):  # YAML reads an unquoted timestamp as one
            instant = value
        else:
            try:
                instant = datetime.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
            except ValueError:
                self.error(f"{row}.{name}", "Must be an ISO 8601 date-time.")
                return None
        if instant.tzinfo is None:
            instant = instant.replace(tzinfo=datetime.UTC)
        if instant > datetime.datetime.now(datetime.UTC) + datetime.timedelta(days=1):
            self.error(f"{row}.{name}", "Must not be in the future.")
            return None
        return instant

    def _assignee(self, row, username) -> int | None:
        if username in (None, ""):
            return None
        if not isinstance(username, str):
            self.error(f"{row}.assignee", "Must be a username.")
            return None
        if username not in self._users:
            user = get_user_model().objects.filter(username=username).values_list("pk", flat=True).first()
            self._users[username] = user if user is not None and assignable(self.workspace_id, user) else None
        if self._users[username] is None:
            if self.unassign_strangers:
                self.unassigned.append(row)
            else:
                self.error(f"{row}.assignee", f'"{username}": {NOT_ASSIGNABLE}')
        return self._users[username]


def check_open_tasks(*, actor, adding: int) -> None:
    """An import counts against its importer's open-task quota (boards/quotas.py) as the creates
    it makes would, all at once: refused whole when they do not all fit."""
    limit = settings.KANDEV_MAX_OPEN_TASKS_PER_USER
    if not limit or actor is None or not adding:
        return
    open_tasks = (
        Task.objects.filter(
            archived_at__isnull=True,
            events__actor=actor,
            events__kind__in=(EventKind.CREATED, EventKind.QUEUED, EventKind.FORCED, EventKind.EXPEDITED),
            events__detail__action="create",
        )
        .distinct()
        .count()
    )
    if open_tasks + adding > limit:
        raise QuotaExceeded(
            quota="open_tasks",
            limit=limit,
            detail=f"This import would bring your open tasks to {open_tasks + adding}; one account may "
            f"have {limit}. Archive finished tasks, or import fewer.",
        )


def place(
    change: BoardChange,
    rows: list[ImportedTask],
    *,
    strict: bool,
    force: bool = False,
    reason: str = "",
    mark_imported: bool = False,
):
    """Admit `rows` into the locked board of `change`, in order, each as a create. A row a full
    limit refuses is left out and listed in the result, or, when `strict`, refuses the whole
    import (the WIP conflict, naming the row). `force` (an owner's choice, checked by the
    caller) admits past full limits, each recorded as a `forced` event with `reason`. A row
    with its `history` keeps it instead of this change's events; without, `mark_imported`
    starts its history with an `imported` event."""
    result = ImportResult(workflow_id=change.workflow.pk)
    change.occupancy.lock_members(sorted({r.assignee_id for r in rows if r.assignee_id is not None}))
    lanes = sorted(change.board.lanes.values(), key=lambda lane: lane.position)
    blocker_types = types_named(
        change, [r.blocked_type for r in rows if r.blocked_type] + [name for r in rows for _, name in _typed_blocks(r)]
    )
    placed: list[tuple[ImportedTask, Task, Outcome | None]] = []  # outcome None: archived
    for row in rows:
        step = change.steps[row.step.pk]
        task = Task(
            workflow=change.workflow,
            lane=change.board.first_lane() if row.lane_position is None else lanes[row.lane_position],
            title=row.title,
            description=row.description,
            priority=row.priority,
            class_of_service=row.class_of_service,
            assignee_id=row.assignee_id,
            blocked_reason=row.blocked_reason,
            blocked_type=blocker_types[row.blocked_type.lower()] if row.blocked_type else None,
            blocked_at=change.now if row.blocked_reason else None,
            due_at=row.due_at,
            due_all_day=row.due_all_day,
            comment_count=len(row.comments),
            blocked_by=row.blocked_by,
            created_at=row.created_at,  # None: the insert stamps now
            **({"id": row.id} if row.id is not None else {}),
        )
        if row.archived:
            _place_archived(change, task, step)
            placed.append((row, task, None))
            continue
        if row.assignee_id is not None:
            try:
                change.occupancy.assignable(row.assignee_id)
            except Invalid:  # left the workspace since the rows were read
                raise Invalid({f"{row.row}.assignee": [NOT_ASSIGNABLE]}) from None
        try:
            outcome = decide(change, step, task)
        except WipLimitReached as refusal:
            if force:  # only where a create would be refused: a queue-mode step still queues
                outcome = decide(change, step, task, force=True)
            elif strict:
                refusal.extra["row"] = row.row
                refusal.detail = f"{row.row}: {refusal.detail}"
                raise
            else:
                result.refused.append({"row": row.row if row.ref is None else row.ref, "reason": refusal.detail})
                continue
        enter(change, task, step, outcome)
        placed.append((row, task, outcome))
    for row, task, _ in placed:
        _keep_times(task, row.times)
    sql.insert([task for _, task, _ in placed])
    attach_card_fields(change, [(row, task) for row, task, _ in placed])
    insert_imported(change, [(task, row.comments) for row, task, _ in placed if row.comments])
    for row, task, outcome in placed:
        step = change.steps[task.step_id]
        kind = EventKind.CREATED if outcome is None else event_kind(outcome, EventKind.CREATED)
        change.record.created.add(task.pk)
        if row.history is not None:
            for event, name in _typed_blocks(row):  # the type of this workspace with that name
                event.detail["type_id"] = str(blocker_types[name.lower()].pk)
            change.record.restored(task, step, row.history)
            if outcome is Outcome.FORCED:  # this import's own act, after the history it brings
                change.record.event(task, kind, to_step=step, reason=reason, action="create", source="import")
        elif mark_imported:
            change.record.event(task, EventKind.IMPORTED, to_step=step, reason=reason, action="import")
        if row.history is None:
            change.record.event(task, kind, to_step=step, reason=reason, action="create", source="import", row=row.row)
        if task.blocked_reason and row.history is None:
            typed = block_detail(task.blocked_type)
            change.record.event(
                task, EventKind.BLOCKED, to_step=step, reason=task.blocked_reason, action="block", **typed
            )
        if outcome is None:
            if row.history is None:
                change.record.event(task, EventKind.ARCHIVED, from_step=step, action="archive")
            result.archived += 1
            continue
        result.queued += outcome is Outcome.QUEUED
        result.forced += outcome is Outcome.FORCED
        result.created += outcome is not Outcome.QUEUED
        after_admission(change, task, outcome)
    if placed:
        change.record.announce("task.created", task=placed[0][1])
    return result


def place_rows(workflow: Workflow, rows: list[ImportedTask], *, actor, dry_run: bool) -> ImportResult:
    """A file's rows into one board, each admitted as a create would be: what a full step
    refuses is left out and reported. A preview raises DryRun inside the transaction, so
    everything it wrote rolls back."""
    check_open_tasks(actor=actor, adding=sum(not row.archived for row in rows))
    with board_change(workflow.pk, actor=actor) as change:
        result = place(change, rows, strict=False)
    if dry_run:
        raise DryRun(result)
    return result


def _place_archived(change: BoardChange, task: Task, step: WorkflowStep) -> None:
    """An archived task keeps its step (where a restore puts it back) and counts nowhere."""
    task.step = step
    task.archived_at = task.entered_step_at = task.updated_at = change.now
    task.admitted, task.queued_at = True, None
    task.position = 0  # a restore gives it a key at the end of its step


def _typed_blocks(row) -> list[tuple]:
    """(event, type name) of the blocks with a type in a row's restored history."""
    return [
        (event, event.detail["type"])
        for event in row.history or ()
        if event.kind == EventKind.BLOCKED and isinstance(event.detail.get("type"), str) and event.detail["type"]
    ]


# A backup's task times, each kept where the task is in the state it dates.
KEPT_TIMES = {
    "started_at": lambda task: True,  # once set, never reset: also where the task is now
    "entered_step_at": lambda task: True,
    "archived_at": lambda task: task.archived_at is not None,
    "blocked_at": lambda task: bool(task.blocked_reason),
    "queued_at": lambda task: not task.admitted,
}


def _keep_times(task: Task, times: dict) -> None:
    for name, applies in KEPT_TIMES.items():
        if times.get(name) is not None and applies(task):
            setattr(task, name, times[name])


def new_board(workspace, name: str, step_names: list[str]) -> Workflow:
    """A board for imported work: its steps in the order given, the first the start step (a
    backlog), the last a done step, those between active; no limits until the team sets them."""
    kinds = [StepKind.ACTIVE] * len(step_names)
    if len(kinds) > 1:
        kinds[0], kinds[-1] = StepKind.BACKLOG, StepKind.DONE
    workflow = Workflow.objects.create(workspace=workspace, name=name)
    create_first_lane(workflow)
    build_steps(
        workflow,
        [
            {"name": step, "position": i, "kind": kind, "is_start_step": i == 0}
            for i, (step, kind) in enumerate(zip(step_names, kinds, strict=True))
        ],
    )
    return workflow


class DryRun(Exception):  # noqa: N818 - not an error: how a preview takes its writes back
    """Raised at the end of a preview's transaction, so that everything it wrote rolls back."""

    def __init__(self, result):
        super().__init__("dry run")
        self.result = result
