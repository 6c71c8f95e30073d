"""The activity feed's pages: a board's (`/workflows/<id>/activity/`, from the board's header)
and a workspace's (`/workspaces/<id>/activity/`, from the home page). The page carries what
it names (boards, people, the kinds of things that happen); static/board/activity.js reads
the feed from the API and follows the boards' live messages."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from boards.activity import COMMENT
from boards.models import EventKind
from boards.views import _member_workflow, people
from workflows.access import role_in, visible_workflows
from workflows.models import Workspace

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


def _page(request, *, title, workspace, workflow, boards, api_url):
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
    return _page(
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
    return _page(
        request,
        title=f"Activity of {workspace.name}",
        workspace=workspace,
        workflow=None,
        boards=list(boards),
        api_url=f"/api/v1/workspaces/{workspace.pk}/activity/",
    )
