"""Board card and column helpers; static/board/render.js fills the same markup client-side."""

from datetime import datetime

from django import template
from django.utils import timezone

register = template.Library()


@register.filter
def age(iso: str | None) -> str:
    """Compact time in step: "just now", "12m", "5h", "3d"."""
    if not iso:
        return ""
    seconds = max(0, int((timezone.now() - datetime.fromisoformat(iso)).total_seconds()))
    if seconds < 60:
        return "just now"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return "just now"


@register.filter
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


@register.simple_tag(takes_context=True)
def assignee_of(context, task: dict | None) -> dict | None:
    """The card's assignee as the page's `people` know them: {"id", "name", "initials", ...}."""
    if not task or task.get("assignee_id") is None:
        return None
    return context["people"].get(task["assignee_id"])


@register.simple_tag(takes_context=True)
def waiting_label(context, task: dict | None, step: dict) -> str:
    """Why the card waits, in words (product.md §2b.6): "2nd in queue", "next for In Progress",
    "3rd for In Progress"; static/board/render.js writes the same from its own model."""
    waiting = task.get("waiting") if task else None
    if not waiting:
        return ""
    place = ordinal(waiting["position"])
    if waiting["state"] == "queued":
        return f"{place} in queue"
    consumer = context["consumers"][step["id"]]["name"]
    return f"next for {consumer}" if waiting["position"] == 1 else f"{place} for {consumer}"


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
