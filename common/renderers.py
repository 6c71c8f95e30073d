import csv
import io

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


# A spreadsheet runs a cell that starts with one of these as a formula (OWASP, "CSV injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_cell(value):
    """One CSV cell: numbers and booleans as they are (a negative number stays a number),
    instants in ISO 8601, None empty, and text that a spreadsheet would run as a formula
    behind a single quote."""
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class CSVRenderer(BaseRenderer):
    """Every CSV kandev writes: the view gives `csv_rows(data)` and `csv_filename()` (safe
    characters only); each cell goes through `spreadsheet_cell`, and the file is sent as an
    attachment."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        view, response = renderer_context["view"], renderer_context["response"]
        response["Content-Disposition"] = f'attachment; filename="{view.csv_filename()}"'
        out = io.StringIO()
        writer = csv.writer(out)
        for row in view.csv_rows(data):
            writer.writerow([spreadsheet_cell(v) for v in row])
        return out.getvalue().encode()
