"""The API's JSON parser: bounded in size, strict, and safe against deep nesting."""

import orjson
from django.conf import settings
from rest_framework import exceptions, parsers, status


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"

    def __init__(self):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        super().__init__(f"The request body is over {limit} bytes.")


class JSONParser(parsers.JSONParser):
    """Reads at most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (with or without a Content-Length:
    DRF's own parser reads any size), then orjson, which refuses nesting beyond 1024 levels
    and integers beyond 64 bits instead of recursing or growing without bound."""

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise PayloadTooLarge()
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None
