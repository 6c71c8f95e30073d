"""The flow page of one board: server-rendered frame; static/flow/flow.js draws the
charts from the `/flow/` API and refetches them when the board changes."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import get_object_or_404, render

from boards.models import ClassOfService
from flow.serializers import MAX_SLE_DAYS
from workflows.access import role_in
from workflows.models import Lane, Role, Workflow

# The page's sections in order; static/flow/flow.js fills each from its endpoint.
CHARTS = [
    {
        "id": "cfd",
        "title": "Cumulative flow",
        "plot": True,
        "help": "Each line counts the tasks that have arrived in its step or a later one, so no line goes down."
        " The vertical distance between two lines is the work in progress between them; the horizontal"
        " distance is roughly how long that work took to get through.",
    },
    {
        "id": "wip",
        "title": "Work in progress per step",
        "plot": True,
        "help": "The tasks in each step at each instant, one line per step (not stacked);"
        " each step's WIP limit is a dashed line of its own, at the limit in force at each instant.",
    },
    {
        "id": "cycle-times",
        "title": "Cycle time",
        "plot": True,
        "help": "Each finished task at its completion date and cycle time, with the 50th, 85th and 95th percentiles.",
    },
    {"id": "throughput", "title": "Throughput", "plot": True, "help": "Tasks that first reached the done step."},
    {
        "id": "aging",
        "title": "Aging work in progress",
        "plot": True,
        "help": "Every card in an active step at its age, against the percentiles of past cycle times.",
    },
    {
        "id": "limits",
        "title": "WIP limit ledger",
        "plot": False,
        "help": "Share of the window each step, group, lane, cell and person spent at and over its limit, and"
        " every breach with its cause. A lane or cell counts the tasks in that lane now; a person the tasks"
        " assigned to them in this board's active steps.",
    },
    {
        "id": "queues",
        "title": "Queue waits",
        "plot": False,
        "help": "How long tasks waited in each step's queue, and how many were pulled.",
    },
    {
        "id": "forecast",
        "title": "When will it be done",
        "plot": True,
        "help": "10,000 simulated futures, each day drawn at random from the days of the window and what"
        " finished on them. 85% means 85 of every 100 futures finished by then (or at least that many).",
    },
    {
        "id": "sle",
        "title": "Service levels",
        "plot": False,
        "help": "Per class of service: 85% of the tasks finished in the window took at most this many days"
        " from their start, and how many tasks that is drawn from; or the service level an owner set.",
    },
    {
        "id": "advice",
        "title": "Limit advice",
        "plot": False,
        "help": "Little's law per limit: average work in progress = throughput × average time. The suggestion"
        " is the limit at today's throughput whose time keeps the standard SLE, with the arithmetic.",
    },
    {
        "id": "experiments",
        "title": "Limit experiments",
        "plot": False,
        "help": "For each change of a limit since the window's start: the tasks finished, throughput and cycle"
        " time percentiles in equal spans before and after it (the time since the change, at most the window),"
        " with how many tasks each is drawn from. Small samples say little.",
    },
    {
        "id": "blockers",
        "title": "Blockers",
        "plot": False,
        "help": "Blocks in the window grouped by reason (case and spacing aside), most blocked time first.",
    },
    {
        "id": "blocker-types",
        "title": "Blocker clusters",
        "plot": False,
        "help": "Blocks in the window by their type (an owner keeps the list in the board's settings): blocked"
        " days, how many, their median length, and the capacity each held: its blocked days while the task"
        " held a slot of an active step, and their share of all the slot-days the active steps held.",
    },
    {
        "id": "limit-changes",
        "title": "Configuration history",
        "plot": False,
        "help": "Every change of a limit or flow rule in the window, with who made it: the ledger and the"
        " work in progress chart judge each instant by the limits in force then.",
    },
    {
        "id": "efficiency",
        "title": "Flow efficiency",
        "plot": False,
        "help": "Per finished task: time worked (in active steps, not blocked) over its whole lead time.",
    },
]


@login_required
def flow_page(request, workflow_id):
    workflow = get_object_or_404(Workflow.objects.select_related("workspace"), pk=workflow_id)
    role = role_in(request.user, workflow.workspace_id)
    if role is None:
        raise Http404
    context = {
        "workflow": workflow,
        "charts": CHARTS,
        "is_owner": role == Role.OWNER,  # owners set service levels
        "classes_of_service": ClassOfService.choices,
        "max_sle_days": MAX_SLE_DAYS,
        "lanes": list(Lane.objects.filter(workflow=workflow).order_by("position", "created_at", "id")),
    }
    return render(request, "flow/flow.html", context)
