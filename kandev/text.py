"""Text every door accepts from people: titles, names, descriptions."""

import unicodedata

from rest_framework import serializers


def clean_text(value: str, *, multiline: bool = False) -> str:
    """Refuse control characters (a title is shown on every viewer's board)."""
    allowed = {"\n", "\t", "\r"} if multiline else set()
    if any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in value):
        raise serializers.ValidationError("Control characters are not allowed.")
    return value
