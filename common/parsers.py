"""The API's JSON parser: bounded in size, strict, and safe against deep nesting."""

import orjson
from django.conf import settings
from rest_framework import exceptions, parsers, status

# A real body nests a handful of levels (a step's events: 5); far deeper is an attack on
# whatever walks the value next (serializers, renderers, the database's JSON).
MAX_JSON_DEPTH = 32


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"

    def __init__(self):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        super().__init__(f"The request body is over {limit} bytes.")


class TooDeep(ValueError):
    def __init__(self, limit: int):
        super().__init__(f"Nested deeper than {limit} levels.")


def json_depth(value) -> int:
    """Nesting depth of a parsed JSON value, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def load_json(raw: bytes, *, max_depth: int = MAX_JSON_DEPTH):
    """orjson's parse (it refuses nesting beyond 1024 levels and integers beyond 64 bits
    instead of recursing or growing), then the depth bound. Raises ValueError."""
    value = orjson.loads(raw)
    if json_depth(value) > max_depth:
        raise TooDeep(max_depth)
    return value


class JSONParser(parsers.JSONParser):
    """Reads at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (with or without a Content-Length:
    DRF's own parser reads any size), then `load_json`."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge()
        try:
            return load_json(raw)
        except ValueError as exc:  # orjson.JSONDecodeError is one
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
