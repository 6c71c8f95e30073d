"""Input checks every door shares (REST, MCP, webhooks): run a serializer, read an id, read
a whole number. Each failure is the one `Invalid` error: a 400 naming the field, in words a
person understands."""

import re
import uuid

from common.errors import Invalid

# DRF's own messages, by their code, as a person would say them (the field's label is shown
# beside each): a pattern of DRF's English wording and its replacement.
_PLAIN = {
    "required": (r".*", "Please fill this in."),
    "blank": (r".*", "Please fill this in."),
    "null": (r".*", "Please fill this in."),
    "invalid": (r"A valid integer is required\.|Must be a valid UUID\.|Must be a valid boolean\.", None),
    "max_string_length": (r".*", "That number is too large."),
    "min_length": (r"Ensure this field has at least (\d+) (elements|characters)\.", None),
    "max_length": (r"Ensure this field has no more than (\d+) (elements|characters)\.", None),
    "min_value": (r"Ensure this value is greater than or equal to (\S+)\.", r"Use \1 or more."),
    "max_value": (r"Ensure this value is less than or equal to (\S+)\.", r"Use \1 or less."),
    "not_a_list": (r".*", "Please give a list."),
    "not_a_dict": (r".*", "Please give an object."),
    "invalid_choice": (r'"(.*)" is not a valid choice\.', r'"\1" is not one of the choices.'),
}
_INVALID = {
    "A valid integer is required.": "Please give a whole number.",
    "Must be a valid UUID.": "Must be a valid id.",
    "Must be a valid boolean.": "Must be true or false.",
}
_COUNTED = {
    ("min_length", "elements"): "Choose at least {n}.",
    ("max_length", "elements"): "Choose at most {n}.",
    ("min_length", "characters"): "Use at least {n} characters.",
    ("max_length", "characters"): "Use at most {n} characters.",
}


def human(message) -> str:
    """One of DRF's field messages (an ErrorDetail, with its code) in plain words; any other
    message (kandev's own are written for people) unchanged."""
    code = getattr(message, "code", None)
    text = str(message)
    if code not in _PLAIN:
        return text
    pattern, replacement = _PLAIN[code]
    match = re.fullmatch(pattern, text)
    if match is None:
        return text
    if code == "invalid":
        return _INVALID[text]
    if replacement is None:
        return _COUNTED[(code, match.group(2))].format(n=match.group(1))
    return match.expand(replacement)


def human_errors(errors):
    """A serializer's errors with each message in plain words, in the same structure (a
    field's list, a nested object's fields, a list's items)."""
    if isinstance(errors, dict):
        return {key: human_errors(value) for key, value in errors.items()}
    if isinstance(errors, list):
        return [human_errors(item) for item in errors]
    return human(errors)


def validated(serializer_class, data, **kwargs) -> dict:
    """`data` checked by `serializer_class` (its field errors become a 400)."""
    serializer = serializer_class(data=data, **kwargs)
    if not serializer.is_valid():
        raise Invalid(human_errors(serializer.errors))
    return serializer.validated_data


def parse_uuid(value, field: str) -> uuid.UUID:
    """An id from a query string or a tool argument."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise Invalid({field: ["Must be a valid id."]}) from None


def whole_number(value: str) -> int | None:
    """`value` as a non-negative int if it is ASCII digits only, else None.

    str.isdigit() also accepts digits int() refuses ("²"), and int() accepts what a query
    or header must not hold (" 7", "٣", "1_000").
    """
    if value and value.isascii() and value.isdigit():
        return int(value)
    return None
