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
