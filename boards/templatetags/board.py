"""Board card and header helpers; static/board/board.js renders the same text client-side."""

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
