"""A board's backup: the portable workflow document (workflows/portable.py) with its tasks
and their history, version 3, and its import into new boards with the tasks admitted as
creates.

Each workflow of a version 2 document carries `tasks`: live ones step by step in board order
(a queue-mode step's queued tasks after its admitted ones, in queue order), then archived
ones. A task names its step by position (`step_position`) and, for people reading the file,
by name (`step`); its assignee by username; its block's type by name (`blocked_type`: found
in the workspace without case, or made there); its labels, due date and checklist as
boards/card_import.py writes them; its `comments` (oldest first) their author by username
(one who is not a member where the document is imported is named in the body).
Ephemeral tasks are scratch work and stay out.
A task with attachments lists them (`attachments`: name, size, content type, uploader, when)
for the record; the files themselves are not in the document, and an import brings none.
A task's links to its blockers go along as `blocked_by`, the blockers' places in the document
(`["workflows[0].tasks[3]"]`): the links between the tasks it carries (a link to a board
left out of the export is left out). A document without `tasks` (version 1, or an export
with `?tasks=0`) brings empty boards.

Version 3 keeps the history: each task carries its lane (`lane_position`), its times
(`updated_at`, `started_at`, `entered_step_at`, `archived_at`, `blocked_at`, `queued_at`)
and `history`, its events oldest first (kind, steps by position, actor by username, reason,
at, detail).
An import restores them as given, so the flow figures of the new board are the old one's.
An actor who is not a member where the document is imported becomes nobody (null); the
detail's people go by username too, and ids that name things of the old install (labels,
links, sessions, a block's type, which goes by its name and is found or made where the
document is imported) are left out. A step deleted before the export is null in the history. A
document brings at most KANDEV_MAX_IMPORT_EVENTS events. Tasks of older documents (or
without `history`) start their history with one `imported` event.

A backup also carries the people's personal WIP limits (`people`: [{"username",
"wip_limit"}], those who have one). An import gives each that limit where the person is a
member of the workspace with no limit of their own (`applied`), leaves a limit they have
(`kept`) and passes over those who are not members (`skipped`); after the tasks are in, so
the limit judges what comes next, not the backup's own cards.

Importing is all-or-nothing: a document with any invalid field, or a task a full limit
refuses, writes nothing (400 naming every field, or the WIP conflict naming the task). The
source board was settled within its limits, so its tasks fit the new board; only one that
was over a limit (forced, or a limit lowered) does not, and an owner may then import with
`force`, which records each such admission as a `forced` event.
"""

import uuid
from dataclasses import dataclass, field

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Case, IntegerField, Prefetch, Value, When

from boards import dependencies
from boards.admission import check_force
from boards.card_import import card_fields_row
from boards.changes import board_change
from boards.imports import KEPT_TIMES, DryRun, ImportResult, TaskReader, check_count, check_open_tasks, place
from boards.links import MAX_BLOCKERS
from boards.locking import board_transaction
from boards.models import (
    BOARD_ORDER,
    QUEUE_ORDER,
    Attachment,
    Comment,
    EventKind,
    Label,
    Task,
    TaskEvent,
    TaskLink,
)
from boards.priorities import PRIORITY_NAMES
from common.errors import Invalid
from workflows import config_history
from workflows.models import Membership, StepKind
from workflows.portable import export_document, import_document
from workflows.step_rules import MAX_WIP_LIMIT

RESTORED = "Imported from a kandev export."
# An event's detail: people by username in the document; ids of the old install's things left out.
DETAIL_PEOPLE = ("assignee_id", "previous")
DETAIL_LANES = ("lane_id", "from_lane_id")  # a move's lanes, by position in the document
# A block's type goes by its name (`type`): the import finds or makes it in its workspace.
DETAIL_LOCAL = ("version", "label_ids", "added", "removed", "blocker_id", "link_id", "session_id", "type_id")
MAX_REASON = 10_000
MAX_PEOPLE = 10_000


@dataclass
class BackupImport:
    """What an import made: [(workflow, ImportResult, unassigned rows)], and the usernames of
    the people's limits `applied`, `kept` and `skipped`."""

    boards: list
    people: dict = field(default_factory=lambda: {"applied": [], "kept": [], "skipped": []})


def export_backup(workflows, *, tasks: bool = True) -> dict:
    """The version 3 document of `workflows`, with their tasks unless `tasks` is False (the
    structure alone: a board to start from, as a template)."""
    document = export_document(workflows)
    if tasks:
        places = {}  # task id -> its place in the document
        for i, (doc, workflow) in enumerate(zip(document["workflows"], workflows, strict=True)):
            ordered, positions, labels = _exported(workflow)
            doc["tasks"] = [_task_row(task, positions, labels) for task in ordered]
            _export_history(workflow, ordered, doc["tasks"], positions)
            places.update((task.pk, (i, j)) for j, task in enumerate(ordered))
        _export_links(document, places)
        document["people"] = _export_people(workflows)
    return document


def _export_people(workflows) -> list[dict]:
    workspaces = {workflow.workspace_id for workflow in workflows}
    limited = Membership.objects.filter(workspace_id__in=workspaces, wip_limit__gt=0)
    return [
        {"username": username, "wip_limit": limit}
        for username, limit in limited.order_by("user__username").values_list("user__username", "wip_limit")
    ]


def _export_links(document: dict, places: dict) -> None:
    """Each task's blockers among the document's tasks, by their places (`blocked_by`)."""
    links = TaskLink.objects.filter(blocker_id__in=places, dependent_id__in=places)
    for blocker_id, dependent_id in links.values_list("blocker_id", "dependent_id"):
        i, j = places[dependent_id]
        row = document["workflows"][i]["tasks"][j]
        row["blocked_by"] = sorted([*row.get("blocked_by", []), _place(*places[blocker_id])])


def _place(i: int, j: int) -> str:
    return f"workflows[{i}].tasks[{j}]"


def _export_history(workflow, ordered: list[Task], rows: list[dict], positions: dict) -> None:
    """Each row's lane by position, its times and its `history` (one query for the events, one
    for the people they name)."""
    lanes = {
        pk: i
        for i, pk in enumerate(workflow.lanes.order_by("position", "created_at", "id").values_list("pk", flat=True))
    }
    events = {}
    for event in TaskEvent.objects.filter(workflow=workflow, task_id__in=[t.pk for t in ordered]).order_by("at", "id"):
        events.setdefault(event.task_id, []).append(event)
    people = {e.actor_id for task_events in events.values() for e in task_events}
    people |= {e.detail.get(key) for task_events in events.values() for e in task_events for key in DETAIL_PEOPLE}
    usernames = dict(get_user_model().objects.filter(pk__in=people - {None}).values_list("pk", "username"))

    def step_position(step_id):
        return positions[step_id][0] if step_id in positions else None

    for task, row in zip(ordered, rows, strict=True):
        row["lane_position"] = lanes[task.lane_id]
        row["updated_at"] = task.updated_at.isoformat()
        row.update({name: _iso(getattr(task, name)) for name in KEPT_TIMES})
        row["history"] = [
            {
                "kind": e.kind,
                "from_step_position": step_position(e.from_step_id),
                "to_step_position": step_position(e.to_step_id),
                "actor": usernames.get(e.actor_id),
                "reason": e.reason,
                "at": e.at.isoformat(),
                "detail": _detail_out(e.detail, usernames, lanes),
            }
            for e in events.get(task.pk, [])
        ]


def _detail_out(detail: dict, usernames: dict, lanes: dict) -> dict:
    out = {key: value for key, value in detail.items() if key not in DETAIL_LOCAL}
    for key in DETAIL_PEOPLE:
        if key in out:
            out[key] = usernames.get(out[key])
    for key in DETAIL_LANES:
        if key in out:
            out[key] = lanes.get(uuid.UUID(out[key])) if out[key] else None
    return out


def _iso(value):
    return value.isoformat() if value is not None else None


def export_tasks(workflow) -> list[dict]:
    ordered, positions, labels = _exported(workflow)
    return [_task_row(task, positions, labels) for task in ordered]


def _exported(workflow) -> tuple[list[Task], dict, dict]:
    """The workflow's tasks as its document lists them, its steps' (position, name), and its
    workspace's labels by id."""
    positions = {s.pk: (s.position, s.name) for s in workflow.steps.all()}
    labels = {str(label.pk): label for label in Label.objects.filter(workspace_id=workflow.workspace_id)}
    # Admitted before queued in each step; queued ones in the order they would be admitted.
    queued_last = Case(When(admitted=False, then=Value(1)), default=Value(0), output_field=IntegerField())
    tasks = (
        Task.objects.filter(workflow=workflow, is_ephemeral=False)
        .select_related("assignee", "blocked_type")
        .prefetch_related(
            "checklist_items",
            Prefetch("comments", Comment.objects.select_related("author").order_by("created_at", "id")),
            Prefetch("attachments", queryset=Attachment.objects.select_related("uploaded_by")),
        )
        .annotate(queued_last=queued_last)
    )
    live = sorted(
        tasks.filter(archived_at__isnull=True).order_by("queued_last", *QUEUE_ORDER[:1], *BOARD_ORDER),
        key=lambda t: (positions[t.step_id][0], t.queued_last),  # stable: keeps the order above
    )
    archived = tasks.filter(archived_at__isnull=False).order_by("archived_at", "id")
    return [*live, *archived], positions, labels


def _task_row(task: Task, positions: dict, labels: dict) -> dict:
    position, name = positions[task.step_id]
    row = {
        "title": task.title,
        "description": task.description,
        "step": name,
        "step_position": position,
        "priority": PRIORITY_NAMES[task.priority],
        "class_of_service": task.class_of_service,
        "assignee": task.assignee.username if task.assignee else None,
        "blocked_reason": task.blocked_reason,
        "blocked_type": task.blocked_type.name if task.blocked_type else None,
        "archived": task.archived_at is not None,
        "created_at": task.created_at.isoformat(),
        **card_fields_row(task, labels),
        "comments": [
            {
                "author": comment.author.username if comment.author_id else None,
                "body": comment.body,
                "created_at": comment.created_at.isoformat(),
                "edited_at": comment.edited_at.isoformat() if comment.edited_at else None,
            }
            for comment in task.comments.all()
        ],
    }
    if task.attachment_count:
        row["attachments"] = [
            {
                "name": a.name,
                "size": a.size,
                "content_type": a.content_type,
                "uploaded_by": a.uploaded_by.username if a.uploaded_by else None,
                "created_at": a.created_at.isoformat(),
            }
            for a in task.attachments.all()
        ]
    return row


def backup_import(*, workspace, document, actor, force: bool = False, dry_run: bool = False) -> BackupImport:
    """Create the workflows of a portable document (version 1, 2 or 3) and their tasks, and
    give its people their limits, all or nothing. `actor` None: an operator. A preview
    (`dry_run`) runs the very same import and rolls it back."""
    try:
        return _import(workspace=workspace, document=document, actor=actor, force=force, dry_run=dry_run)
    except DryRun as preview:
        return preview.result


@board_transaction
def _import(*, workspace, document, actor, force, dry_run) -> BackupImport:
    task_docs = _task_docs(document)
    people = _read_people(document)
    workflows = import_document(workspace, document)  # raises on any invalid structure
    reader = TaskReader(workspace.pk, unassign_strangers=True)
    rows = [
        _read_tasks(reader, i, workflow, docs, history=document.get("version") == 3)
        for i, (workflow, docs) in enumerate(zip(workflows, task_docs, strict=True))
    ]
    reader.check()
    links = _read_links(task_docs, rows)
    check_force(workflow=workflows[0], actor=actor, force=force, reason=RESTORED)
    check_open_tasks(actor=actor, adding=sum(not r.archived for batch in rows for r in batch))
    imported = []
    for workflow, batch in zip(workflows, rows, strict=True):
        with board_change(workflow.pk, actor=actor) as change:
            result = place(change, batch, strict=True, force=force, reason=RESTORED, mark_imported=True)
        unassigned = [row for row in reader.unassigned if row.startswith(f"workflows[{len(imported)}].")]
        imported.append((workflow, result, unassigned))
    if links:
        made = [TaskLink(blocker_id=b.id, dependent_id=d.id, created_by=actor) for b, d in links]
        TaskLink.objects.bulk_create(made)
        for workflow in workflows:  # a pull in the import may have finished a blocker
            with board_change(workflow.pk, actor=actor) as change:
                dependencies.mark_board(change)
    _keep_updated_times([row for batch in rows for row in batch])
    result = BackupImport(imported, _apply_people(workspace, people, actor))
    if dry_run:
        raise DryRun(result)  # inside the transaction: everything written rolls back
    return result


def _read_people(document) -> dict[str, int]:
    """{username: limit} of the document's `people`; a 400 naming each bad entry."""
    people = document.get("people", []) if isinstance(document, dict) else []
    if not isinstance(people, list) or len(people) > MAX_PEOPLE:
        raise Invalid({"people": [f"A list of at most {MAX_PEOPLE} people."]})
    limits, errors = {}, {}
    for i, person in enumerate(people):
        username = person.get("username") if isinstance(person, dict) else None
        limit = person.get("wip_limit") if isinstance(person, dict) else None
        if not isinstance(username, str) or not username:
            errors[f"people[{i}].username"] = ["A username is required."]
        elif _position(limit, MAX_WIP_LIMIT + 1) is None:
            errors[f"people[{i}].wip_limit"] = [f"Must be a whole number from 0 to {MAX_WIP_LIMIT}."]
        else:
            limits[username] = limit
    if errors:
        raise Invalid(errors, detail="The workflow document is invalid; nothing was imported.")
    return limits


def _apply_people(workspace, limits: dict, actor) -> dict:
    """Each member without a limit of their own gets the document's (recorded as an owner's
    change would be); a limit someone has stays."""
    people = {"applied": [], "kept": [], "skipped": []}
    members = (
        Membership.objects.filter(workspace=workspace, user__username__in=[u for u, n in limits.items() if n])
        .select_related("user")
        .select_for_update(of=("self",))
        .order_by("pk")
    )
    found = {membership.user.username: membership for membership in members}
    for username, limit in sorted(limits.items()):
        membership = found.get(username)
        if membership is None or not limit:
            people["skipped"].append(username)
        elif membership.wip_limit:
            people["kept"].append(username)
        else:
            before = config_history.person_config(membership)
            membership.wip_limit = limit
            membership.save(update_fields=["wip_limit"])
            after = config_history.person_config(membership)
            config_history.record(workspace_id=workspace.pk, workflow_id=None, actor=actor, before=before, after=after)
            people["applied"].append(username)
    return people


def _keep_updated_times(rows: list) -> None:
    """The tasks' last-change times as the document has them: last, as every write stamps its own."""
    kept = [Task(pk=row.id, updated_at=row.times["updated_at"]) for row in rows if row.times.get("updated_at")]
    Task.objects.bulk_update(kept, ["updated_at"])


def _task_docs(document) -> list[list]:
    """Each workflow's task documents, bounded before anything is read or written."""
    workflows = document.get("workflows") if isinstance(document, dict) else None
    if not isinstance(workflows, list):
        return []  # import_document says what is wrong
    if document.get("version") == 1:
        return [[] for _ in workflows]
    docs, errors = [], {}
    for i, workflow in enumerate(workflows):
        tasks = workflow.get("tasks", []) if isinstance(workflow, dict) else []
        if not isinstance(tasks, list):
            errors[f"workflows[{i}].tasks"] = ["Must be a list of tasks."]
            tasks = []
        docs.append(tasks)
    if errors:
        raise Invalid(errors, detail="The workflow document is invalid; nothing was imported.")
    check_count(sum(len(tasks) for tasks in docs), "workflows")
    events = sum(
        len(t["history"]) for tasks in docs for t in tasks if isinstance(t, dict) and isinstance(t.get("history"), list)
    )
    limit = settings.KANDEV_MAX_IMPORT_EVENTS
    if events > limit:
        raise Invalid(
            {"workflows": [f"An import restores at most {limit} history events; this one has {events}."]},
            detail="The document is too large to import; nothing was imported.",
        )
    return docs


def _read_links(docs: list, rows: list) -> list[tuple]:
    """The document's links as (blocker row, dependent row) pairs, each row given the id its
    task will have, and each dependent the ids of its unfinished blockers (so no pull of the
    import takes it); a place that names no task of the document, the task itself, or a
    cycle is a 400."""
    by_place = {row.row: row for batch in rows for row in batch}
    links, errors = [], {}
    for i, batch in enumerate(docs):
        for j, doc in enumerate(batch):
            named = doc.get("blocked_by", [])
            field = f"{_place(i, j)}.blocked_by"
            if not isinstance(named, list) or len(named) > MAX_BLOCKERS:
                errors[field] = [f"A list of at most {MAX_BLOCKERS} places of tasks in this document."]
                continue
            for place_ in named:
                if place_ not in by_place or place_ == _place(i, j):
                    errors.setdefault(field, []).append(f"No other task of this document is at {place_!r}.")
                else:
                    links.append((by_place[place_], by_place[_place(i, j)]))
    if errors:
        raise Invalid(errors, detail="The workflow document is invalid; nothing was imported.")
    for row in by_place.values():
        row.id = uuid.uuid4()
    blockers = {}
    for blocker, dependent in links:
        blockers.setdefault(dependent.row, []).append(blocker.row)
    for dependent_place in blockers:
        if _in_cycle(dependent_place, blockers):
            raise Invalid({f"{dependent_place}.blocked_by": ["These links would make a cycle."]})
    for blocker, dependent in links:
        if not blocker.archived and blocker.step.kind != StepKind.DONE:  # boards.models.UNFINISHED
            dependent.blocked_by = sorted([*dependent.blocked_by, str(blocker.id)])
    return links


def _in_cycle(start: str, blockers: dict) -> bool:
    todo, seen = list(blockers.get(start, ())), set()
    while todo:
        current = todo.pop()
        if current == start:
            return True
        if current not in seen:
            seen.add(current)
            todo.extend(blockers.get(current, ()))
    return False


def _read_tasks(reader: TaskReader, i: int, workflow, docs: list, *, history: bool) -> list:
    steps = list(workflow.steps.order_by("position"))
    lanes = list(workflow.lanes.order_by("position"))
    by_name = {}
    for step in steps:
        by_name.setdefault(step.name, []).append(step)
    rows = []
    for j, doc in enumerate(docs):
        row = f"workflows[{i}].tasks[{j}]"
        if not isinstance(doc, dict):
            reader.error(row, "Must be a mapping with title, step and the task's fields.")
            continue
        step = _step_of(reader, row, doc, steps, by_name)
        task = reader.read(row, step, doc)
        kept = _read_kept(reader, row, doc, steps, lanes) if history else {}
        if task is not None:
            for name, value in kept.items():
                setattr(task, name, value)
            rows.append(task)
    return rows


def _read_kept(reader: TaskReader, row: str, doc: dict, steps: list, lanes: list) -> dict:
    """A version 3 row's lane, times and history as ImportedTask fields."""
    kept = {"times": {name: reader._instant(row, doc.get(name), name) for name in ("updated_at", *KEPT_TIMES)}}
    lane = doc.get("lane_position")
    if lane is not None:
        if _position(lane, len(lanes)) is None:
            reader.error(f"{row}.lane_position", f"No lane at position {lane}.")
        kept["lane_position"] = _position(lane, len(lanes))
    events = doc.get("history")
    if events is None:
        return kept
    if not isinstance(events, list):
        reader.error(f"{row}.history", "Must be a list of events.")
        return kept
    kept["history"] = [_read_event(reader, f"{row}.history[{k}]", e, steps, lanes) for k, e in enumerate(events)]
    return kept


def _read_event(reader: TaskReader, at: str, doc, steps: list, lanes: list) -> TaskEvent | None:
    if not isinstance(doc, dict):
        reader.error(at, "Must be a mapping with kind, at and the event's steps.")
        return None
    if doc.get("kind") not in EventKind.values:
        reader.error(f"{at}.kind", f"Must be one of {', '.join(EventKind.values)}.")
    instant = reader._instant(at, doc.get("at"), "at")
    if doc.get("at") in (None, ""):
        reader.error(f"{at}.at", "The event's moment is required.")
    moved = {}
    for name in ("from_step", "to_step"):
        position = doc.get(f"{name}_position")
        if position is not None and _position(position, len(steps)) is None:
            reader.error(f"{at}.{name}_position", f"No step at position {position}.")
        moved[f"{name}_id"] = steps[position].pk if _position(position, len(steps)) is not None else None
    detail = doc.get("detail") or {}
    if not isinstance(detail, dict):
        reader.error(f"{at}.detail", "Must be a mapping.")
        detail = {}
    for key in DETAIL_PEOPLE:
        if key in detail:
            detail[key] = _member_or_none(reader, detail[key])
    for key in DETAIL_LANES:
        if key in detail:
            position = _position(detail[key], len(lanes))
            detail[key] = str(lanes[position].pk) if position is not None else None
    return TaskEvent(
        kind=doc.get("kind"),
        actor_id=_member_or_none(reader, doc.get("actor")),
        reason=reader._text(at, "reason", doc.get("reason"), MAX_REASON, multiline=True),
        at=instant,
        detail=detail,
        **moved,
    )


def _member_or_none(reader: TaskReader, username):
    return reader._member(username) if isinstance(username, str) and username else None


def _position(value, count: int) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count else None


def _step_of(reader: TaskReader, row: str, doc: dict, steps: list, by_name: dict):
    """The task's step: by `step_position` when given (names may repeat), else by `step` name."""
    position = doc.get("step_position")
    if position is not None:
        if isinstance(position, int) and not isinstance(position, bool) and 0 <= position < len(steps):
            return steps[position]
        reader.error(f"{row}.step_position", f"No step at position {position}.")
        return None
    named = by_name.get(doc.get("step")) if isinstance(doc.get("step"), str) else None
    if not named:
        reader.error(f"{row}.step", "Name a step of the workflow (step or step_position).")
        return None
    if len(named) > 1:
        reader.error(f"{row}.step", f'Several steps are named "{doc["step"]}": give step_position.')
        return None
    return named[0]


def result_body(workflow, result: ImportResult, unassigned: list) -> dict:
    body = result.as_body()
    body.pop("workflow_id")
    return {**body, "unassigned": unassigned}
