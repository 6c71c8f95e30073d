"""Text every door accepts from people: titles, names, descriptions."""

import unicodedata

from rest_framework import serializers


def clean_text(value: str, *, multiline: bool = False) -> str:
    """Refuse control characters, and text made only of invisible ones (zero-width and
    bidi controls, category Cf, and spaces): a title is shown on every viewer's board."""
    allowed = {"\n", "\t", "\r"} if multiline else set()
    if any(unicodedata.category(ch) == "Cc" and ch not in allowed for ch in value):
        raise serializers.ValidationError("Control characters are not allowed.")
    if value and all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in value):
        raise serializers.ValidationError("Must contain visible characters.")
    return value
