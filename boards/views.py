"""The browser pages: the user's boards, one live board, its archive, its step settings and
the activity feeds (a board's, from its header; a workspace's, from the home page: the page
carries what it names, static/board/activity.js reads the feed and follows live messages).

Pages are server-rendered from the same selectors as the API; static/board/*.js enhances
them and writes through the REST API (session auth + CSRF).
"""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.csrf import ensure_csrf_cookie

from accounts.profiles import profile_of
from boards.activity import COMMENT
from boards.api import TaskFilter
from boards.models import (
    BLOCKER_TYPE_NAME_MAX,
    LABEL_NAME_MAX,
    BlockerType,
    ClassOfService,
    EventKind,
    LabelColor,
    Priority,
    Task,
)
from boards.priorities import PRIORITY_RANKS
from boards.snapshots import board_snapshot
from flow import analytics
from flow.instants import Window
from flow.serializers import DEFAULT_WINDOW
from teams.invitations import invitations_for
from workflows.access import WRITE_ROLES, memberships_of, role_in, visible_workflows
from workflows.catalog import catalog
from workflows.models import Membership, OnFull, OnSessionLimit, Role, StepKind, Workflow, Workspace
from workflows.step_rules import ACTION_TYPES

# Name -> pull rank, for the add-task select and the script's card order.
# The select preselects what the server picks when none is sent.
DEFAULT_PRIORITY = Priority(Task._meta.get_field("priority").default).label

# What a person reads for the engine's step events and actions (the engine's names are the
# keys; each event offers the actions step_rules allows there, in this order).
EVENT_LABELS = {
    "on_enter": "When a task enters",
    "on_turn_complete": "When an agent's turn completes",
    "on_exit": "When a task leaves",
}
ON_SESSION_LIMIT_LABELS = {
    OnSessionLimit.QUEUE: "Queue the session until a slot opens",
    OnSessionLimit.REJECT: "Start no session (the task's history says why)",
}
ACTION_LABELS = {
    "auto_start_agent": "Start an agent",
    "move_to_next": "Move to next step",
    "move_to_previous": "Move to previous step",
    "move_to_step": "Move to step …",
}


def event_lists(events: dict) -> list[dict]:
    """A step's events as the settings editor renders them: per event, its choices and actions."""
    return [
        {
            "key": key,
            "label": EVENT_LABELS[key],
            "choices": [(kind, label) for kind, label in ACTION_LABELS.items() if kind in kinds],
            "actions": [
                {"type": action.get("type"), "step_id": str((action.get("config") or {}).get("step_id", ""))}
                for action in events.get(key) or []
            ],
        }
        for key, kinds in ACTION_TYPES.items()
    ]


@login_required
@ensure_csrf_cookie
def home(request):
    memberships = (
        memberships_of(request.user)
        .select_related("workspace")
        .prefetch_related("workspace__workflows")
        .order_by("workspace__name", "workspace__created_at")
    )
    return render(
        request,
        "boards/home.html",
        {
            "memberships": memberships,
            "write_roles": WRITE_ROLES,
            "owner_role": Role.OWNER,
            "templates": catalog(),  # what GET /api/v1/workflow-templates/ lists
            "invitations": invitations_for(request.user),
        },
    )


def _member_workflow(request, workflow_id, *, write: bool = False):
    """A board of the user's workspace: 404 for non-members (nothing leaked), 403 for viewers'
    writes."""
    workflow = get_object_or_404(Workflow.objects.select_related("workspace"), pk=workflow_id)
    role = role_in(request.user, workflow.workspace_id)
    if role is None:
        raise Http404
    if write and role not in WRITE_ROLES:
        raise PermissionDenied("Viewers cannot change this board's steps.")
    return workflow, role


@login_required
@ensure_csrf_cookie
def board(request, workflow_id):
    workflow, role = _member_workflow(request, workflow_id)
    return _board_page(request, workflow, role)


@login_required
@ensure_csrf_cookie
def task_detail(request, workflow_id, task_id):
    """The board with one of its tasks open in the detail dialog (a link to the task)."""
    workflow, role = _member_workflow(request, workflow_id)
    task = get_object_or_404(Task.objects.only("pk"), pk=task_id, workflow=workflow)
    return _board_page(request, workflow, role, open_task_id=task.pk)


def people(workspace_id, *, board: Workflow | None = None) -> list[dict]:
    """The workspace's members as the board names them: who may be assigned (owners and
    members) and whose name a card shows, in one query (static/board/people.js gives each
    their initials). For a `board`, each also carries their personal `wip_limit` and
    `elsewhere`, their counted tasks in active steps of the workspace's other boards: with
    the board's own cards, what a move's preview judges their limit by (static/board/limits.js)."""
    memberships = Membership.objects.filter(workspace_id=workspace_id).select_related("user")
    if board is not None:
        counted = (
            Task.objects.occupying()
            .filter(assignee_id=OuterRef("user_id"), step__kind=StepKind.ACTIVE, workflow__workspace_id=workspace_id)
            .exclude(workflow=board)
            .order_by()
            .values("assignee_id")
            .annotate(n=Count("id"))
            .values("n")
        )
        memberships = memberships.annotate(elsewhere=Coalesce(Subquery(counted), 0))
    found = []
    for membership in memberships.order_by("user__username", "pk"):
        name = membership.user.get_full_name() or membership.user.get_username()
        person = {
            "id": membership.user_id,
            "username": membership.user.get_username(),
            "name": name,
            "assignable": membership.role in WRITE_ROLES,
        }
        if board is not None:
            person.update(wip_limit=membership.wip_limit, elsewhere=membership.elsewhere)
        found.append(person)
    return found


def service_levels(workflow) -> dict:
    """{class of service: days or None}: the SLE each card in an active step is aged against,
    read once for the page (the task detail's, flow/outlook.py: the last 30 days)."""
    now = timezone.now()
    sles = analytics.sle(workflow, Window(now - DEFAULT_WINDOW, now))["sles"]
    return {row["class_of_service"]: row["days"] for row in sles}


def _board_page(request, workflow, role, open_task_id=None):
    snapshot = board_snapshot(workflow=workflow)
    members = people(workflow.workspace_id, board=workflow)
    return render(
        request,
        "boards/board.html",
        {
            "workflow": workflow,
            "board": snapshot,
            "can_write": role in WRITE_ROLES,
            "priorities": PRIORITY_RANKS,
            "default_priority": DEFAULT_PRIORITY,
            "open_task_id": open_task_id,
            "class_choices": ClassOfService.choices,
            "people_list": members,
            "service_levels": service_levels(workflow),
            "time_zone": profile_of(request.user).time_zone,  # due dates are read in it
            "is_owner": role == Role.OWNER,
            "max_attachment_mb": max(1, settings.KANDEV_MAX_ATTACHMENT_BYTES // 2**20),
        },
    )


@login_required
@ensure_csrf_cookie
def step_settings(request, workflow_id):
    workflow, role = _member_workflow(request, workflow_id, write=True)
    snapshot = board_snapshot(workflow=workflow)
    group_names = {group["id"]: group["name"] for group in snapshot["groups"]}
    steps = [
        {**step, "event_lists": event_lists(step["events"]), "group_name": group_names.get(step["group_id"])}
        for step in snapshot["steps"]
    ]
    return render(
        request,
        "boards/settings.html",
        {
            "workflow": workflow,
            "steps": steps,
            "groups": snapshot["groups"],
            "new_step": {"kind": StepKind.ACTIVE, "event_lists": event_lists({})},
            "on_full_choices": OnFull.choices,
            "kind_choices": StepKind.choices,
            "on_session_limit_choices": ON_SESSION_LIMIT_LABELS.items(),
            "is_owner": role == Role.OWNER,
            "default_session_limit": settings.KANDEV_MAX_CONCURRENT_SESSIONS_PER_WORKSPACE,
            "labels": snapshot["labels"],
            "label_colors": LabelColor.choices,
            "label_name_max": LABEL_NAME_MAX,
            "blocker_types": BlockerType.objects.filter(workspace_id=workflow.workspace_id).order_by("name", "id")
            if role == Role.OWNER
            else [],
            "blocker_type_name_max": BLOCKER_TYPE_NAME_MAX,
        },
    )


@login_required
@ensure_csrf_cookie
def archive(request, workflow_id):
    workflow, role = _member_workflow(request, workflow_id)
    q = request.GET.get("q", "").strip()
    # The API's own filter (GET /api/v1/tasks/?workflow=&archived=true&q=), so search means
    # the same on both.
    found = TaskFilter(
        {"archived": "true", "q": q},
        queryset=Task.objects.filter(workflow=workflow).select_related("step").order_by("-archived_at", "id"),
    )
    return render(
        request,
        "boards/archive.html",
        {
            "workflow": workflow,
            "tasks": found.qs,
            "q": q,
            "can_write": role in WRITE_ROLES,
        },
    )


# What the "What" filter offers, in words (the feed's `kind`).
KIND_LABELS = [
    (COMMENT, "Comments"),
    (EventKind.CREATED, "Created"),
    (EventKind.MOVED, "Moves"),
    (EventKind.PULLED, "Pulls"),
    (EventKind.FORCED, "Forced admissions"),
    (EventKind.EXPEDITED, "Expedited admissions"),
    (EventKind.QUEUED, "Queued"),
    (EventKind.PROMOTED, "Promoted from a queue"),
    (EventKind.BLOCKED, "Blocks"),
    (EventKind.UNBLOCKED, "Unblocks"),
    (EventKind.ASSIGNED, "Assignments"),
    (EventKind.CLASSIFIED, "Class of service changes"),
    (EventKind.ARCHIVED, "Archived"),
    (EventKind.RESTORED, "Restored"),
    (EventKind.DELETED, "Deleted"),
]


def _activity_page(request, *, title, workspace, workflow, boards, api_url):
    return render(
        request,
        "boards/activity.html",
        {
            "title": title,
            "workspace": workspace,
            "workflow": workflow,
            "kinds": KIND_LABELS,
            "people_list": people(workspace.pk),
            "feed": {
                "url": api_url,
                "boards": {str(pk): name for pk, name in boards},
            },
        },
    )


@login_required
def workflow_activity(request, workflow_id):
    workflow, _ = _member_workflow(request, workflow_id)
    return _activity_page(
        request,
        title=f"Activity of {workflow.name}",
        workspace=workflow.workspace,
        workflow=workflow,
        boards=[(workflow.pk, workflow.name)],
        api_url=f"/api/v1/workflows/{workflow.pk}/activity/",
    )


@login_required
def workspace_activity(request, workspace_id):
    workspace = get_object_or_404(Workspace, pk=workspace_id)
    if role_in(request.user, workspace.pk) is None:
        raise Http404
    boards = visible_workflows(request.user).filter(workspace=workspace).order_by("name").values_list("pk", "name")
    return _activity_page(
        request,
        title=f"Activity of {workspace.name}",
        workspace=workspace,
        workflow=None,
        boards=list(boards),
        api_url=f"/api/v1/workspaces/{workspace.pk}/activity/",
    )
