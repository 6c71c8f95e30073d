"""OpenAPI post-processing: the error responses every operation can give (common.errors)."""

ERROR = {
    "type": "object",
    "description": 'kandev\'s error body: {"code", "detail", ...extra}.',
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


# Each operation's tag (the resource it acts on), by the first rule its path matches.
TAGS = [
    ("/api/v1/tasks/{task_id}/comments/", "Comments"),
    ("/api/v1/comments/", "Comments"),
    ("/api/v1/workflows/{id}/activity/", "Activity"),
    ("/api/v1/workspaces/{id}/activity/", "Activity"),
    ("/api/v1/workflows/{id}/flow/", "Flow analytics"),
    ("/api/v1/workspaces/{workspace_id}/members/", "Members and invites"),
    ("/api/v1/workspaces/{workspace_id}/invites/", "Members and invites"),
    ("/api/v1/me/invitations/", "Members and invites"),
    ("/api/v1/workspaces/{id}/workflows/", "Boards"),
    ("/api/v1/workspaces/", "Workspaces"),
    ("/api/v1/workflow-templates/", "Boards"),
    ("/api/v1/workflows/", "Boards"),
    ("/api/v1/steps/", "Steps"),
    ("/api/v1/step-groups/", "Step groups"),
    ("/api/v1/lanes/", "Lanes"),
    ("/api/v1/tasks/{task_id}/sessions/", "Agent sessions"),
    ("/api/v1/tasks/{task_id}/watch/", "Notifications"),
    ("/api/v1/tasks/{task_id}/unwatch/", "Notifications"),
    ("/api/v1/notifications/", "Notifications"),
    ("/api/v1/webhooks/", "Outbound webhooks"),
    ("/api/v1/tasks/{task_id}/checklist/", "Checklists"),
    ("/api/v1/checklist-items/", "Checklists"),
    ("/api/v1/labels/", "Labels"),
    ("/api/v1/blocker-types/", "Blocker types"),
    ("/api/v1/tasks/{task_id}/attachments/", "Attachments"),
    ("/api/v1/attachments/", "Attachments"),
    ("/api/v1/tasks/", "Tasks"),
    ("/api/v1/links/", "Tasks"),
    ("/api/v1/sessions/", "Agent sessions"),
    ("/api/v1/intakes/", "Webhook intakes"),
    ("/api/v1/review-watches/", "Review watches"),
    ("/api/v1/me/", "Your account"),
    ("/api/v1/tokens/", "Your account"),
]
# The summaries of operations that are not a plain list, create, get, update or delete.
SUMMARIES = {
    ("post", "/api/v1/intakes/{id}/rotate-secret/"): "Rotate an intake's secret",
    ("get", "/api/v1/lanes/{id}/cells/"): "A lane's cell limits (the lane in each step)",
    ("put", "/api/v1/lanes/{id}/cells/"): "Set a lane's cell limits",
    ("post", "/api/v1/intakes/{id}/take-over/"): "Take over an intake",
    ("get", "/api/v1/me/"): "Get your account",
    ("patch", "/api/v1/me/"): "Update your account",
    ("get", "/api/v1/me/invitations/"): "List your invitations",
    ("post", "/api/v1/me/invitations/{invitation_id}/accept/"): "Accept an invitation",
    ("post", "/api/v1/me/invitations/{invitation_id}/decline/"): "Decline an invitation",
    ("post", "/api/v1/review-watches/{id}/take-over/"): "Take over a review watch",
    ("post", "/api/v1/sessions/{id}/cancel/"): "Cancel an agent session",
    ("post", "/api/v1/sessions/{id}/events/"): "Report a runner's event (boot_ready, turn_completed, failed)",
    ("post", "/api/v1/sessions/claim/"): "Claim the next agent session (runners)",
    ("post", "/api/v1/tasks/{id}/archive/"): "Archive a task",
    ("post", "/api/v1/tasks/{id}/block/"): "Block a task with a reason",
    ("get", "/api/v1/tasks/{id}/events/"): "A task's history",
    ("post", "/api/v1/tasks/{id}/make-permanent/"): "Make an ephemeral task permanent",
    ("post", "/api/v1/tasks/{id}/move/"): "Move a task to a step (admitted by its limits)",
    ("post", "/api/v1/tasks/{id}/restore/"): "Restore an archived task",
    ("post", "/api/v1/tasks/{id}/unblock/"): "Unblock a task",
    ("post", "/api/v1/tasks/{task_id}/sessions/"): "Start an agent session for a task",
    ("post", "/api/v1/tasks/{task_id}/watch/"): "Watch a task (hear of its news)",
    ("post", "/api/v1/tasks/{task_id}/unwatch/"): "Stop watching a task",
    ("get", "/api/v1/notifications/"): "List your notifications (your inbox)",
    ("post", "/api/v1/notifications/read/"): "Mark notifications read",
    ("post", "/api/v1/tasks/bulk-move/"): "Move several tasks at once",
    ("get", "/api/v1/tasks/{task_id}/checklist/"): "List a task's checklist items",
    ("post", "/api/v1/tasks/{task_id}/checklist/"): "Add an item to a task's checklist",
    ("get", "/api/v1/workflow-templates/"): "List the board templates",
    ("get", "/api/v1/workflows/{id}/board/"): "A board with its steps, tasks and agents",
    ("get", "/api/v1/workflows/{id}/events/"): "A board's history",
    ("get", "/api/v1/workflows/{id}/export/"): "Export a board (YAML or JSON)",
    ("post", "/api/v1/workspaces/{id}/workflows/import/"): "Import boards into a workspace",
    ("post", "/api/v1/workspaces/{workspace_id}/members/"): "Add a member to a workspace",
}
FLOW = {
    "advice": "limit advice",
    "aging": "aging work in progress",
    "blockers": "blocker clusters",
    "cfd": "cumulative flow diagram",
    "cycle-times": "cycle and lead times",
    "efficiency": "flow efficiency",
    "forecast": "Monte Carlo forecast",
    "limits": "WIP limit ledger",
    "queues": "queue and pull times",
    "sle": "service-level expectations",
    "throughput": "throughput",
    "wip": "work in progress per step",
}
# What one of a collection is called, where it is not the path's word less its "s".
ONE = {"workflows": "board", "review-watches": "review watch", "sessions": "agent session", "tokens": "API token"}
PLURAL = {"workflows": "boards", "tokens": "API tokens", "sessions": "agent sessions"}


def _a(noun: str) -> str:
    return f"{'an' if noun[0].lower() in 'aeiou' else 'a'} {noun}"


def summary(method: str, path: str) -> str:
    """The operation's summary: from SUMMARIES or FLOW, else a plain list, create, get, update
    or delete of the path's collection ("List tasks", "Create a task", "Delete an invite")."""
    if (method, path) in SUMMARIES:
        return SUMMARIES[(method, path)]
    parts = path.strip("/").split("/")[2:]  # after api/v1
    if len(parts) >= 3 and parts[-2] == "flow":
        return f"A board's {FLOW.get(parts[-1], parts[-1])}"
    item = parts[-1].startswith("{")
    collection = parts[-2] if item else parts[-1]
    one = ONE.get(collection, collection.removesuffix("s").replace("-", " "))
    if not item:
        many = PLURAL.get(collection, collection.replace("-", " "))
        return f"List {many}" if method == "get" else f"Create {_a(one)}"
    verb = {"get": "Get", "delete": "Delete"}.get(method, "Update")
    return f"{verb} {_a(one)}"


def tag_and_summarize(result, generator, request, public):
    """Group the operations by resource and give each a summary, unless it names its own."""
    for path, item in result.get("paths", {}).items():
        tag = next((name for prefix, name in TAGS if path.startswith(prefix)), "Other")
        for method, operation in item.items():
            operation["tags"] = [tag]
            operation.setdefault("summary", summary(method, path))
    return result
