"""The activity feed of a board or a workspace: who did what, when.

Two sources, newest first: the boards' history (`TaskEvent`: moves, pulls, forced
admissions, blocks, assignments, ...) and their comments (with whom they mention). A page
is read with a keyset cursor, each source by its (board, newest first) index, so a page
costs the same few queries wherever it is in the history: at most `size + 1` rows of each
source, merged here, then the titles and step names of what the page shows.

The cursor is the sort key of the page's last item: (instant, source, id), where at one
instant a comment comes before an event and ids break the rest of the ties.
"""

import base64
import binascii
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from boards.comments import comment_data
from boards.models import Comment, EventKind, Task, TaskEvent
from common.errors import Invalid
from workflows.models import WorkflowStep

COMMENT = "comment"
KINDS = [*EventKind.values, COMMENT]
SOURCES = {"event": 0, COMMENT: 1}  # at one instant, the higher first


@dataclass(frozen=True)
class Filters:
    kind: str | None = None  # an event kind, or "comment"
    person: int | None = None  # whoever did it (the event's actor, the comment's author)
    task: object = None  # one task's id
    mentions: int | None = None  # comments that mention this user


def encode_cursor(at: datetime, source: str, pk) -> str:
    return base64.urlsafe_b64encode(f"{at.isoformat()}|{source}|{pk}".encode()).decode()


def decode_cursor(value: str) -> tuple:
    """(instant, source, id) of a cursor; a 400 for anything else."""
    try:
        at, source, pk = base64.urlsafe_b64decode(value.encode()).decode().split("|")
        when = datetime.fromisoformat(at)
        pk = uuid.UUID(pk) if source == COMMENT else int(pk)
    except (ValueError, binascii.Error, UnicodeError):
        raise Invalid({"cursor": ["Not a cursor of this feed."]}) from None
    if source not in SOURCES or when.tzinfo is None or (isinstance(pk, int) and not 0 <= pk < 2**63):
        raise Invalid({"cursor": ["Not a cursor of this feed."]})
    return when, source, pk


def _after(source: str, cursor, at_field: str) -> Q:
    """The rows of `source` that sort after the cursor's item, newest first."""
    if cursor is None:
        return Q()
    at, cursor_source, pk = cursor
    if source == cursor_source:
        return Q(**{f"{at_field}__lt": at}) | Q(**{at_field: at, "pk__lt": pk})
    if SOURCES[source] < SOURCES[cursor_source]:  # comes after the cursor's source at its instant
        return Q(**{f"{at_field}__lte": at})
    return Q(**{f"{at_field}__lt": at})


def activity(*, workflows, filters: Filters, size: int, cursor: str | None = None) -> tuple[list[dict], str | None]:
    """A page of the feed of `workflows` (a queryset of the boards the viewer may see):
    its items, and the cursor of the next page (None on the last)."""
    after = decode_cursor(cursor) if cursor else None
    rows = []
    if filters.kind != COMMENT and filters.mentions is None:
        events = TaskEvent.objects.filter(_after("event", after, "at"), workflow__in=workflows)
        if filters.kind:
            events = events.filter(kind=filters.kind)
        if filters.person is not None:
            events = events.filter(actor_id=filters.person)
        if filters.task is not None:
            events = events.filter(task_id=filters.task)
        events = events.select_related("actor").order_by("-at", "-id")[: size + 1]
        rows += [(e.at, SOURCES["event"], e.pk, e) for e in events]
    if filters.kind in (None, COMMENT):
        comments = Comment.objects.filter(_after(COMMENT, after, "created_at"), workflow__in=workflows)
        if filters.person is not None:
            comments = comments.filter(author_id=filters.person)
        if filters.task is not None:
            comments = comments.filter(task_id=filters.task)
        if filters.mentions is not None:
            comments = comments.filter(mentions=filters.mentions)
        comments = comments.select_related("author").prefetch_related("mentions").order_by("-created_at", "-id")
        rows += [(c.created_at, SOURCES[COMMENT], c.pk, c) for c in comments[: size + 1]]
    rows.sort(key=lambda row: row[:3], reverse=True)  # ids are compared only within one source
    page = [row[3] for row in rows[:size]]
    next_cursor = None
    if len(rows) > size:
        last = page[-1]
        next_cursor = (
            encode_cursor(last.created_at, COMMENT, last.pk)
            if isinstance(last, Comment)
            else encode_cursor(last.at, "event", last.pk)
        )
    return _items(page), next_cursor


def _items(page: list) -> list[dict]:
    """The page's items, with the titles of their tasks and the names of their steps."""
    titles = dict(Task.objects.filter(pk__in={row.task_id for row in page}).values_list("pk", "title"))
    step_ids = {pk for row in page if isinstance(row, TaskEvent) for pk in (row.from_step_id, row.to_step_id) if pk}
    steps = dict(WorkflowStep.objects.filter(pk__in=step_ids).values_list("pk", "name")) if step_ids else {}
    return [_item(row, titles, steps) for row in page]


def _item(row, titles: dict, steps: dict) -> dict:
    title = titles.get(row.task_id)
    if isinstance(row, Comment):
        return {
            "id": f"comment-{row.pk}",
            "kind": COMMENT,
            "at": row.created_at.isoformat(),
            "actor": row.author.username if row.author_id else None,
            "workflow_id": str(row.workflow_id),
            "task_id": str(row.task_id),
            "task_title": title,
            "event": None,
            "comment": comment_data(row, row.mentions.all()),
        }
    return {
        "id": f"event-{row.pk}",
        "kind": row.kind,
        "at": row.at.isoformat(),
        "actor": row.actor.username if row.actor_id else None,
        "workflow_id": str(row.workflow_id),
        "task_id": str(row.task_id),
        "task_title": title if title is not None else row.detail.get("title"),
        "event": {
            "id": row.pk,
            "from_step_id": str(row.from_step_id) if row.from_step_id else None,
            "from_step_name": steps.get(row.from_step_id),
            "to_step_id": str(row.to_step_id) if row.to_step_id else None,
            "to_step_name": steps.get(row.to_step_id),
            "reason": row.reason,
            "detail": row.detail,
        },
        "comment": None,
    }
