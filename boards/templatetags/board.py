"""The board page's data blocks. Its columns and cards are built by static/board/render.js
from the page's <template> partials and this data: their words (age, waiting, WIP counts...)
are written there only."""

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from common.renderers import encode

register = template.Library()


@register.filter
def data_script(value, element_id: str) -> SafeString:
    """Django's `json_script`, encoded by orjson: the board page carries its board, megabytes of
    JSON on a large board. The same escapes, so the JSON cannot end the <script> element."""
    text = encode(value).decode()
    text = text.replace("<", "\\u003C").replace(">", "\\u003E").replace("&", "\\u0026")
    return format_html('<script id="{}" type="application/json">{}</script>', element_id, mark_safe(text))
