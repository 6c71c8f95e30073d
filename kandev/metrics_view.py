"""The /metrics endpoint: this process's counters, and gauges read from the
database at scrape time by `BoardCollector`, so every process reports the same truth."""

import hmac

from django.conf import settings
from django.db.models import Count
from django.http import HttpResponse, JsonResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import GaugeMetricFamily
from prometheus_client.registry import Collector

from accounts.authentication import user_for_key
from agents.models import AgentSession, SessionStatus
from boards.models import Task
from boards.selectors import cell_occupancy, lane_occupancy, with_occupied
from common.metrics import counters_exposition
from workflows.models import Lane, LaneCell, Membership, StepGroup, Workflow, WorkflowStep


class BoardCollector(Collector):
    """Step, group, lane, cell and personal occupancy and limits, session queue and slot use:
    counted at scrape time."""

    def collect(self):
        occupied = dict(Task.objects.occupying().values("step_id").annotate(n=Count("id")).values_list("step_id", "n"))
        yield from _limit_gauges(
            "step",
            "Live admitted tasks in a step.",
            "A step's WIP limit (0 = unlimited).",
            ["workflow", "step"],
            (
                ((workflow_id, step_id), occupied.get(step_id, 0), limit)
                for step_id, workflow_id, limit in WorkflowStep.objects.values_list("id", "workflow_id", "wip_limit")
            ),
        )
        yield from _groups()
        yield from _lanes()
        yield from _cells()
        yield from _persons()

        by_status = {
            (workflow_id, status): n
            for workflow_id, status, n in AgentSession.objects.filter(
                status__in=[SessionStatus.QUEUED, SessionStatus.STARTING, SessionStatus.RUNNING]
            )
            .values("workflow_id", "status")
            .annotate(n=Count("id"))
            .values_list("workflow_id", "status", "n")
        }
        families = {
            SessionStatus.QUEUED: GaugeMetricFamily(
                "kandev_sessions_queued", "Sessions waiting for a slot.", labels=["workflow"]
            ),
            SessionStatus.STARTING: GaugeMetricFamily(
                "kandev_sessions_starting",
                "Sessions holding a slot while a runner boots.",
                labels=["workflow"],
            ),
            SessionStatus.RUNNING: GaugeMetricFamily(
                "kandev_sessions_running", "Sessions running a turn.", labels=["workflow"]
            ),
        }
        for workflow_id in Workflow.objects.values_list("id", flat=True):
            for status, family in families.items():
                family.add_metric([str(workflow_id)], by_status.get((workflow_id, status), 0))
        yield from families.values()


def _limit_gauges(kind: str, occupancy_help: str, limit_help: str, labels: list, rows) -> list:
    """`kandev_<kind>_occupancy` and `kandev_<kind>_wip_limit`, from rows of (label values,
    what it holds, its limit)."""
    occupancy = GaugeMetricFamily(f"kandev_{kind}_occupancy", occupancy_help, labels=labels)
    wip_limit = GaugeMetricFamily(f"kandev_{kind}_wip_limit", limit_help, labels=labels)
    for values, occupied, limit in rows:
        values = [str(value) for value in values]
        occupancy.add_metric(values, occupied)
        wip_limit.add_metric(values, limit)
    return [occupancy, wip_limit]


def _groups():
    """Each step group's occupancy and limit (two queries)."""
    occupied = dict(
        Task.objects.occupying()
        .filter(step__group__isnull=False)
        .values("step__group_id")
        .annotate(n=Count("id"))
        .values_list("step__group_id", "n")
    )
    groups = StepGroup.objects.values_list("id", "workflow_id", "wip_limit")
    return _limit_gauges(
        "group",
        "Live admitted tasks in a step group's steps.",
        "A step group's WIP limit.",
        ["workflow", "group"],
        (((workflow_id, group_id), occupied.get(group_id, 0), limit) for group_id, workflow_id, limit in groups),
    )


def _lanes():
    """Each lane's occupancy (its live admitted tasks in active steps) and limit (two queries)."""
    occupied = lane_occupancy(Lane.objects.all())
    lanes = Lane.objects.values_list("id", "workflow_id", "wip_limit")
    return _limit_gauges(
        "lane",
        "Live admitted tasks of a lane in active steps.",
        "A lane's WIP limit (0 = unlimited).",
        ["workflow", "lane"],
        (((workflow_id, lane_id), occupied.get(lane_id, 0), limit) for lane_id, workflow_id, limit in lanes),
    )


def _cells():
    """Each cell limit and what it counts, for the cells that have one (two queries)."""
    cells = list(LaneCell.objects.select_related("lane"))
    occupied = cell_occupancy(cells)
    return _limit_gauges(
        "cell",
        "A lane's live admitted tasks in one step (cells with a limit).",
        "A cell's WIP limit (lane x step).",
        ["workflow", "lane", "step"],
        (((c.lane.workflow_id, c.lane_id, c.step_id), occupied[(c.lane_id, c.step_id)], c.wip_limit) for c in cells),
    )


def _persons():
    """Each personal limit and what it counts, for the memberships that have one (one query)."""
    limited = with_occupied(Membership.objects.filter(wip_limit__gt=0))
    rows = limited.values_list("workspace_id", "user_id", "wip_limit", "occupied")
    return _limit_gauges(
        "person",
        "A person's live admitted tasks in active steps of the workspace's boards.",
        "A person's WIP limit.",
        ["workspace", "user"],
        (((workspace_id, user_id), occupied, limit) for workspace_id, user_id, limit, occupied in rows),
    )


def exposition() -> bytes:
    gauges = CollectorRegistry(auto_describe=False)
    gauges.register(BoardCollector())
    return counters_exposition() + generate_latest(gauges)


def _bearer_ok(request) -> bool:
    expected = settings.KANDEV_METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.partition(" ")
    return bool(expected) and scheme.lower() == "bearer" and hmac.compare_digest(given.strip(), expected)


def _user(request):
    scheme, _, key = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "token" and key.strip():
        return user_for_key(key.strip())
    return request.user if request.user.is_authenticated else None


def metrics_view(request):
    """Prometheus text for a staff user (session or API token) or the metrics bearer token."""
    if not _bearer_ok(request):
        user = _user(request)
        if user is None:
            return JsonResponse(
                {
                    "code": "not_authenticated",
                    "detail": "Authentication credentials were not provided.",
                },
                status=401,
            )
        if not user.is_staff:
            return JsonResponse({"code": "permission_denied", "detail": "Metrics are for staff only."}, status=403)
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)
