"""One error type for the domain, mapped to HTTP once.

Services raise `KandevError` subclasses; `exception_handler` turns them (and DRF's own
exceptions) into the `{"code", "detail", ...}` body of the API.
"""

import logging
import re
import sys

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import set_rollback

from common import metrics
from common.parsers import PayloadTooLarge

logger = logging.getLogger(__name__)


class KandevError(Exception):
    status_code = status.HTTP_400_BAD_REQUEST
    code = "error"

    def __init__(self, detail: str, **extra):
        super().__init__(detail)
        self.detail = detail
        self.extra = extra

    def as_body(self) -> dict:
        return {"code": self.code, "detail": self.detail, **self.extra}


class WipLimitReached(KandevError):
    """A limit that applies has no room: `scope` names which one, and the
    body names the limit (`step`, `group` or `assignee`), its size and its occupancy.
    Each kind of limit (boards/limits.py) words its own."""

    status_code = status.HTTP_409_CONFLICT
    code = "wip_limit_reached"

    def __init__(self, *, scope: str, limit: int, occupied: int, detail: str, **named):
        metrics.ADMISSIONS_REJECTED.labels(scope=scope, reason=self.code).inc()  # every door raises this
        self.scope = scope
        self.occupied = occupied
        super().__init__(detail, scope=scope, **named, limit=limit, occupied=occupied)


class Conflict(KandevError):
    status_code = status.HTTP_409_CONFLICT
    code = "conflict"

    def __init__(self, detail: str, *, code: str = "conflict", **extra):
        super().__init__(detail, **extra)
        self.code = code


class QuotaExceeded(Conflict):
    """An account would create more than a quota lets one account have (a setting each), so
    that no single account can fill the database."""

    def __init__(self, *, quota: str, limit: int, detail: str):
        super().__init__(detail, code="quota_exceeded", quota=quota, limit=limit)


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


class Invalid(KandevError):
    """Validation failure with field errors: 400 {"code": "invalid", "errors": {...}}."""

    code = "invalid"

    def __init__(self, errors: dict[str, list[str]], detail: str = "Invalid input."):
        super().__init__(detail, errors=human_errors(errors))


class Forbidden(KandevError):
    status_code = status.HTTP_403_FORBIDDEN
    code = "permission_denied"


class Unavailable(KandevError):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    code = "unavailable"


# What a lost or refusing database raises (after the admission retries are spent).
DATABASE_DOWN = (OperationalError, InterfaceError)
RETRY_LATER = {"Retry-After": "5"}


def database_unavailable(exc: Exception) -> Unavailable:
    logger.error("database unavailable: %s: %s", type(exc).__name__, str(exc).strip())
    return Unavailable("The database is unavailable; retry shortly.")


def exception_handler(exc, context):
    if isinstance(exc, DATABASE_DOWN):
        exc = database_unavailable(exc)
    elif isinstance(exc, RequestDataTooBig):  # Django's own check, when DRF reads request.body
        exc = PayloadTooLarge()
    if isinstance(exc, KandevError):
        set_rollback()
        headers = RETRY_LATER if isinstance(exc, Unavailable) else None
        return Response(exc.as_body(), status=exc.status_code, headers=headers)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.ValidationError):
        set_rollback()
        errors = human_errors(exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail})
        return Response(
            {"code": "invalid", "detail": "Invalid input.", "errors": errors},
            status=status.HTTP_400_BAD_REQUEST,
        )
    if isinstance(exc, exceptions.APIException):
        set_rollback()
        headers = {}
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
        detail = str(exc.detail)  # a plain str: every renderer (YAML too) can write it
        code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
        return Response({"code": code, "detail": detail}, status=exc.status_code, headers=headers)
    return None


def server_error(request):
    """handler500: a database outage anywhere (views, middleware, session save) is a 503
    with the API's error body; anything else stays Django's plain 500."""
    exc = sys.exc_info()[1]
    if isinstance(exc, DATABASE_DOWN):
        error = database_unavailable(exc)
        return JsonResponse(error.as_body(), status=error.status_code, headers=RETRY_LATER)
    return defaults.server_error(request)


def not_found(request, exception):
    """handler404: API clients get the API's error body even for paths no route matches."""
    if request.path.startswith("/api/"):
        return JsonResponse({"code": "not_found", "detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


class NotFoundPage:
    """Middleware: in development (DEBUG) Django answers a 404 with its technical page, which
    lists every URL pattern; kandev answers with its own page (or the API's body) as in
    production, so what a visitor sees does not depend on DEBUG."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if settings.DEBUG and response.status_code == 404 and response.get("Content-Type", "").startswith("text/html"):
            return not_found(request, None)
        return response
