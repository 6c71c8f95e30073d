"""OpenAPI post-processing: the error responses every operation can give (common.errors)."""

ERROR = {
    "type": "object",
    "description": 'kandev\'s error body: {"code", "detail", ...extra} (api.md, Errors).',
    "properties": {
        "code": {"type": "string"},
        "detail": {"type": "string"},
        "errors": {
            "type": "object",
            "additionalProperties": True,
            "description": "Field errors, with code invalid.",
        },
    },
    "required": ["code", "detail"],
}
ALWAYS = {
    "400": "Invalid input (code invalid, with field errors) or query parameters.",
    "401": "Not signed in, or a bad or revoked API token.",
    "403": "Signed in but not allowed (a viewer writing, a member forcing, a CSRF failure).",
    "404": "No such object, or one of a workspace you are not a member of.",
    "503": "The database is unavailable; retry after the Retry-After header.",
}
WRITES = {
    "409": "A conflict with the board's state (WIP limit, archived task, ...) or a quota (quota_exceeded).",
    "413": "The request body is over DATA_UPLOAD_MAX_MEMORY_SIZE (1 MiB).",
}


def document_errors(result, generator, request, public):
    result.setdefault("components", {}).setdefault("schemas", {})["KandevError"] = ERROR
    body = {"application/json": {"schema": {"$ref": "#/components/schemas/KandevError"}}}
    for item in result.get("paths", {}).values():
        for method, operation in item.items():
            responses = operation.setdefault("responses", {})
            statuses = {**ALWAYS, **(WRITES if method != "get" else {})}
            for status, description in statuses.items():
                responses.setdefault(status, {"description": description, "content": body})
    return result
