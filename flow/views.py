"""The flow page of one board: server-rendered frame; static/flow/flow.js draws the
charts from the `/flow/` API and refetches them when the board changes."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from workflows.access import role_in
from workflows.models import Workflow


@login_required
def flow_page(request, workflow_id):
    workflow = get_object_or_404(Workflow.objects.select_related("workspace"), pk=workflow_id)
    if role_in(request.user, workflow.workspace_id) is None:
        raise Http404
    return render(request, "flow/flow.html", {"workflow": workflow})
