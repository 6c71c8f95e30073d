"""Input checks every door shares (REST, MCP, webhooks): run a serializer, read an id, read
a whole number. Each failure is the one `Invalid` error: a 400 naming the field (in words a
person understands: common.errors)."""

import uuid
from contextlib import contextmanager

from django.db import IntegrityError, transaction

from common.errors import Invalid


def validated(serializer_class, data, **kwargs) -> dict:
    """`data` checked by `serializer_class` (its field errors become a 400)."""
    serializer = serializer_class(data=data, **kwargs)
    if not serializer.is_valid():
        raise Invalid(serializer.errors)
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


def check_name_free(rows, name: str, taken: str) -> None:
    """A 400 on `name` (saying `taken`) if one of `rows` already has this name, case aside."""
    if rows.filter(name__iexact=name).exists():
        raise Invalid({"name": [taken]})


@contextmanager
def name_held(taken: str):
    """The name's uniqueness as the database holds it: two writers that both passed
    `check_name_free` at once (nothing else orders them) — the second is refused as taken."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError:
        raise Invalid({"name": [taken]}) from None
