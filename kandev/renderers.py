import orjson
from django.utils.functional import Promise
from rest_framework.renderers import BaseRenderer


def _default(value):
    if isinstance(value, Promise):  # lazy translation strings in DRF messages
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode(data) -> bytes:
    """The project's JSON: the API's bodies, the board's shared bytes and the page's data."""
    return orjson.dumps(data, default=_default, option=orjson.OPT_NON_STR_KEYS)


class JSONRenderer(BaseRenderer):
    """orjson: the board payload is the hot path; UUIDs and datetimes encode natively."""

    media_type = "application/json"
    format = "json"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None:
            return b""
        return encode(data)
