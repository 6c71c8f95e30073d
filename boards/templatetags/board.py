"""Board card and column helpers; static/board/render.js fills the same markup client-side."""

from datetime import datetime
from html import escape

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from common.renderers import encode

register = template.Library()


def age(iso: str | None, now: datetime) -> str:
    """Compact time in step: "just now", "12m", "5h", "3d"."""
    if not iso:
        return ""
    seconds = max(0, int((now - datetime.fromisoformat(iso)).total_seconds()))
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return "just now"


@register.filter
def data_script(value, element_id: str) -> SafeString:
    """Django's `json_script`, encoded by orjson: the board page carries its board, megabytes of
    JSON on a large board. The same escapes, so the JSON cannot end the <script> element."""
    text = encode(value).decode()
    text = text.replace("<", "\\u003C").replace(">", "\\u003E").replace("&", "\\u0026")
    return format_html('<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text))


def ordinal(n: int | None) -> str:
    """1st, 2nd, 3rd, 4th, ... 11th, 12th, 13th, 21st: a queued agent's place in line."""
    if not n:
        return ""
    suffix = "th" if n % 100 in (11, 12, 13) else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def initials(name: str) -> str:
    """ "Alice Brown" -> "AB", "olivia" -> "OL": a card's assignee at a glance (static/board/people.js
    writes the same for someone the page learns of later)."""
    words = name.split()
    return (words[0][0] + words[-1][0] if len(words) > 1 else name[:2]).upper()


def waiting_label(task: dict | None, step: dict, consumers: dict) -> str:
    """Why the card waits, in words (product.md §2b.6): "2nd in queue", "next for In Progress",
    "3rd for In Progress"; static/board/render.js writes the same from its own model.
    `consumers` is `board_consumers()` of the board."""
    waiting = task.get("waiting") if task else None
    if not waiting:
        return ""
    place = ordinal(waiting["position"])
    if waiting["state"] == "queued":
        return f"{place} in queue"
    consumer = consumers[step["id"]]["name"]
    return f"next for {consumer}" if waiting["position"] == 1 else f"{place} for {consumer}"


# A card, written in Python rather than as an included template: a board page has thousands
# of cards, and the template engine spent ~150 µs on each (bench/profile.py page). Every value
# is escaped with html.escape, as Django's own escape does, without its lazy-string wrapper.
_CARD = (
    '<li class="card priority-{priority}{classes}" data-task-id="{id}" data-assignee-id="{assignee_id}"'
    ' data-class-of-service="{class_of_service}" tabindex="0" aria-describedby="move-help">\n'
    '<span class="card-title">{title}</span>\n'
    '<span class="card-expedite" data-role="expedite"{expedite_hidden}>'
    '<span class="expedite-icon" aria-hidden="true"></span>Expedite</span>\n'
    '<span class="card-blocked" data-role="blocked"{blocked_hidden}>Blocked: {blocked_reason}</span>\n'
    '<span class="card-waiting" data-role="waiting" data-state="{waiting_state}"{waiting_hidden}>'
    '<span class="waiting-icon" aria-hidden="true"></span><span data-role="waiting-text">{waiting}</span></span>\n'
    '<span class="card-agent" data-role="agent" data-status="{agent_status}"{agent_hidden}>'
    '<span class="agent-icon" aria-hidden="true"></span>Agent <span data-role="agent-status">{agent_status}</span>'
    '<span data-role="agent-position"{agent_position_hidden}>{agent_position}</span></span>\n'
    '<span class="card-meta"><span class="priority" data-role="priority">{priority}</span>'
    '<span class="card-assignee" data-role="assignee" title="{assignee_name}"{assignee_hidden}>'
    '<span class="avatar" aria-hidden="true" data-role="assignee-initials">{assignee_initials}</span>'
    '<span class="visually-hidden" data-role="assignee-name">{assigned_to}</span></span>'
    '<time class="age" data-role="age" datetime="{entered_step_at}" title="Time in this step">{age}</time>'
    "</span></li>\n"
)
_HIDDEN = " hidden"


def card(task: dict | None, step: dict | None, *, people: dict, consumers: dict, now: datetime) -> SafeString:
    """One card's markup (`task=None`: the blank card the script clones). `people` is the
    workspace's members by id (`views.people`), `consumers` the board's `board_consumers()`."""
    task = task or {}
    person = people.get(task.get("assignee_id"))
    waits = waiting_label(task, step, consumers)
    session = task.get("session") or {}
    expedite = task.get("class_of_service") == "expedite"
    queue_position = session.get("queue_position")
    return mark_safe(
        _CARD.format(
            id=escape(task.get("id", "")),
            priority=escape(task.get("priority", "")),
            classes=(" is-ephemeral" if task.get("is_ephemeral") else "") + (" is-expedite" if expedite else ""),
            assignee_id=escape(str(task.get("assignee_id") or "")),
            class_of_service=escape(task.get("class_of_service", "")),
            title=escape(task.get("title", "")),
            expedite_hidden="" if expedite else _HIDDEN,
            blocked_hidden="" if task.get("blocked_reason") else _HIDDEN,
            blocked_reason=escape(task.get("blocked_reason") or ""),
            waiting_state=escape(task["waiting"]["state"]) if waits else "",
            waiting_hidden="" if waits else _HIDDEN,
            waiting=escape(waits),
            agent_status=escape(session.get("status", "")),
            agent_hidden="" if session else _HIDDEN,
            agent_position_hidden="" if queue_position else _HIDDEN,
            agent_position=f" ({ordinal(queue_position)})" if queue_position else "",
            assignee_name=escape(person["name"]) if person else "",
            assignee_hidden="" if person else _HIDDEN,
            assignee_initials=escape(person["initials"]) if person else "",
            assigned_to=f"Assigned to {escape(person['name'])}" if person else "",
            entered_step_at=escape(task.get("entered_step_at") or ""),
            age=age(task.get("entered_step_at"), now),
        )
    )


@register.simple_tag(takes_context=True)
def cards(context, step: dict, *, admitted: bool) -> SafeString:
    """The step's admitted (or queued) cards, in board order."""
    now = timezone.now()
    people, consumers = context["people"], context["consumers"]
    return mark_safe(
        "".join(
            card(task, step, people=people, consumers=consumers, now=now)
            for task in step["tasks"]
            if task["admitted"] is admitted
        )
    )


@register.simple_tag
def blank_card() -> SafeString:
    return card(None, None, people={}, consumers={}, now=timezone.now())


@register.inclusion_tag("boards/_wip_count.html")
def wip_count(step: dict) -> dict:
    occupied, limit = step["occupied"], step["wip_limit"]
    if not limit:
        text, label = str(occupied), f"{occupied} tasks"
    else:
        text, label = f"{occupied}/{limit}", f"{occupied} of {limit} (WIP limit)"
    if step["over_limit"]:
        label = f"{occupied} of {limit}: over the WIP limit"
    return {"text": text, "label": label, "over": step["over_limit"]}


@register.simple_tag
def board_layout(board: dict) -> list[dict]:
    """The board's columns in runs: a step group's neighbouring steps share one run under the
    group's band, any other step is a run of its own (static/board/render.js lays out alike)."""
    groups = {group["id"]: group for group in board.get("groups", [])}
    runs = []
    for step in board["steps"]:
        group = groups.get(step.get("group_id"))
        if group is not None and runs and runs[-1]["group"] is group:
            runs[-1]["steps"].append(step)
        else:
            runs.append({"group": group, "steps": [step], "key": step["id"]})
    return runs


@register.simple_tag
def group_label(group: dict) -> dict:
    """A group band's count and what it reads as (render.js `groupLabel` writes the same)."""
    occupied, limit = group["occupied"], group["wip_limit"]
    label = f"Group {group['name']}: {occupied} of {limit}"
    return {
        "text": f"{occupied}/{limit}",
        "label": f"{label}, over its WIP limit" if group["over_limit"] else f"{label} (WIP limit)",
    }


@register.simple_tag
def group_placeholder() -> dict:
    """The run the group <template> is rendered for: the script replaces "{id}", "{key}" and
    "{name}" in its clone, puts the group's columns in, and renders its count."""
    group = {"id": "{id}", "name": "{name}", "wip_limit": 0, "occupied": 0, "over_limit": False}
    return {"group": group, "steps": [], "key": "{key}"}


@register.simple_tag
def column_placeholder() -> dict:
    """The step the column <template> is rendered for: the script replaces "{id}", "{name}",
    "{color}" and "{on_full}" in its clone, and renders the counts as for any column."""
    return {
        "id": "{id}",
        "name": "{name}",
        "color": "{color}",
        "on_full": "{on_full}",
        "wip_limit": 0,
        "occupied": 0,
        "queued": 0,
        "over_limit": False,
        "tasks": [],
    }
