"""`/api/v1/workflows/{id}/flow/...`: the flow figures as JSON, or CSV with `?format=csv`
(one row per point, item, bucket or breach). Members only: 404 for anyone else. Each
request is throttled per user (flow/throttling.py) and its work bounded (flow/bounds.py)
before its figure is computed."""

from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.text import slugify
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import ErrorSerializer
from common.errors import Invalid
from common.pagination import Pagination
from common.renderers import CSVRenderer, JSONRenderer
from common.validation import validated
from flow import analytics, bounds, cache, config, experiments, figures
from flow import forecast as forecasting
from flow.figures import Window
from flow.kinds import BoardSteps
from flow.serializers import (
    DEFAULT_WINDOW,
    MAX_PAGE_SIZE,
    PAGE_SIZE,
    AdviceSerializer,
    AgingSerializer,
    BlockersSerializer,
    CfdParams,
    CfdSerializer,
    CycleTimesSerializer,
    EfficiencySerializer,
    ExperimentParams,
    ExperimentsSerializer,
    ForecastParams,
    ForecastSerializer,
    LaneParams,
    LimitChangesParams,
    LimitChangesSerializer,
    LimitsSerializer,
    QueuesSerializer,
    ServiceLevelParams,
    SleSerializer,
    ThroughputParams,
    ThroughputSerializer,
    WindowParams,
    WipSerializer,
)
from flow.throttling import FlowThrottle
from workflows.access import require_role
from workflows.models import Workflow

WINDOW_PARAMETERS = [
    OpenApiParameter("from", str, description="ISO 8601 instant (default: 30 days before `to`)"),
    OpenApiParameter("to", str, description="ISO 8601 instant (default: now); the window is at most 366 days"),
    OpenApiParameter("format", str, enum=["json", "csv"]),
]
LANE_PARAMETER = OpenApiParameter(
    "lane", OpenApiTypes.UUID, description="Only the tasks in this lane now (a lane of the board)"
)
LANE_PARAMETERS = [*WINDOW_PARAMETERS, LANE_PARAMETER]


def asked(request) -> dict:
    """A flow request's parameters: its query, the answer's format aside."""
    return {k: v for k, v in request.query_params.items() if k != "format"}


class FlowView(APIView):
    renderer_classes = [JSONRenderer, CSVRenderer]
    throttle_classes = [FlowThrottle]
    params = WindowParams
    name = ""  # the figure's part of the path, e.g. "cfd"

    def get(self, request, pk):
        self.workflow = get_object_or_404(Workflow, pk=pk)
        require_role(request.user, self.workflow.workspace_id)
        query = asked(request)
        params = self.valid_params(query)

        def compute():
            board = BoardSteps.of(self.workflow)
            bounds.check(
                figure=self.name,
                workflow_id=self.workflow.pk,
                window=params["window"],
                interval=params.get("interval"),
                steps=len(board.steps),
            )
            return self.figure(self.workflow, params, board)

        return Response(cache.kept(self.workflow, self.name, query, compute))

    def valid_params(self, query: dict) -> dict:
        params = self.params(data=query, context={"workflow": self.workflow})
        unknown = sorted(set(query) - set(params.fields))
        if unknown:  # a misspelt parameter is refused, not silently ignored
            raise Invalid({name: ["Unknown query parameter."] for name in unknown})
        params.is_valid(raise_exception=True)
        return params.validated_data

    def csv_filename(self) -> str:
        """`<board>-<figure>.csv` in letters, digits and hyphens only."""
        return f"{slugify(self.workflow.name)[:60].strip('-') or 'board'}-{self.name}.csv"

    def finalize_response(self, request, response, *args, **kwargs):
        # Error bodies and OPTIONS' description of the view are JSON, also when CSV was asked for.
        if response.status_code >= 400 or request.method not in ("GET", "HEAD"):
            request.accepted_renderer, request.accepted_media_type = JSONRenderer(), JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class CfdView(FlowView):
    name = "cfd"
    params = CfdParams

    @extend_schema(
        parameters=[*LANE_PARAMETERS, OpenApiParameter("interval", str, enum=["hour", "day"])],
        responses={200: CfdSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.cfd(workflow, params["window"], params["interval"], board, params.get("lane"))

    def csv_rows(self, data):
        steps = data["steps"]
        yield ["at", *(s["name"] for s in steps)]
        for point in data["points"]:
            yield [point["at"], *(point["arrived"][str(s["id"])] for s in steps)]


class WipView(FlowView):
    name = "wip"
    params = CfdParams

    @extend_schema(
        parameters=[*LANE_PARAMETERS, OpenApiParameter("interval", str, enum=["hour", "day"])],
        responses={200: WipSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.wip(workflow, params["window"], params["interval"], board, params.get("lane"))

    def csv_rows(self, data):
        steps = data["steps"]
        yield ["at", *(s["name"] for s in steps), *(f"{s['name']} (queued)" for s in steps)]
        for point in data["points"]:
            ids = [str(s["id"]) for s in steps]
            yield [point["at"], *(point["counts"][i] for i in ids), *(point["queued"][i] for i in ids)]


class CycleTimesView(FlowView):
    name = "cycle-times"
    params = LaneParams

    @extend_schema(
        parameters=LANE_PARAMETERS,
        responses={200: CycleTimesSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.cycle_times(workflow, params["window"], board, params.get("lane"))

    def csv_rows(self, data):
        fields = [
            "task_id",
            "title",
            "lane_id",
            "started_at",
            "finished_at",
            "cycle_seconds",
            "lead_seconds",
            "blocked_seconds",
        ]
        yield fields
        for item in data["items"]:
            yield [item[f] for f in fields]


class ThroughputView(FlowView):
    name = "throughput"
    params = ThroughputParams

    @extend_schema(
        parameters=[*LANE_PARAMETERS, OpenApiParameter("interval", str, enum=["day", "week"])],
        responses={200: ThroughputSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.throughput(workflow, params["window"], params["interval"], board, params.get("lane"))

    def csv_rows(self, data):
        yield ["start", "count"]
        for bucket in data["buckets"]:
            yield [bucket["start"], bucket["count"]]


class AgingView(FlowView):
    name = "aging"
    params = LaneParams

    @extend_schema(
        parameters=LANE_PARAMETERS,
        responses={200: AgingSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.aging(workflow, params["window"], board=board, lane_id=params.get("lane"))

    def csv_rows(self, data):
        fields = ["task_id", "step_id", "age_seconds", "percentile_band"]
        yield fields
        for item in data["items"]:
            yield [item[f] for f in fields]


class LimitsView(FlowView):
    name = "limits"

    @extend_schema(
        parameters=WINDOW_PARAMETERS,
        responses={200: LimitsSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.limits(workflow, params["window"], board)

    def csv_rows(self, data):
        head = ["scope", "id", "name", "limit", "at_limit_ratio", "over_limit_ratio", "never_reached"]
        yield [*head, "breach_started_at", "breach_ended_at", "max_over", "causes"]
        for limit in data["limits"]:
            fields = [limit[f] for f in head]
            if not limit["breaches"]:
                yield [*fields, None, None, None, None]
            for breach in limit["breaches"]:
                causes = "; ".join(f"{c['kind']} by {c['actor'] or '-'}: {c['reason']}" for c in breach["causes"])
                yield [*fields, breach["started_at"], breach["ended_at"], breach["max_over"], causes]


class QueuesView(FlowView):
    name = "queues"

    @extend_schema(
        parameters=WINDOW_PARAMETERS,
        responses={200: QueuesSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return figures.queues(workflow, params["window"], board)

    def csv_rows(self, data):
        yield [
            "id",
            "name",
            "waits",
            "wait_p50_seconds",
            "wait_p85_seconds",
            "wait_p95_seconds",
            "queued",
            "promoted",
            "pulled",
        ]
        for step in data["steps"]:
            p = step["wait_percentiles"]
            yield [
                step["id"],
                step["name"],
                step["waits"],
                p["50"],
                p["85"],
                p["95"],
                step["queued"],
                step["promoted"],
                step["pulled"],
            ]


class ForecastView(FlowView):
    name = "forecast"
    params = ForecastParams

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "from", str, description="ISO 8601 instant: the history's start (default: 30 days before `to`)"
            ),
            OpenApiParameter("to", str, description="ISO 8601 instant: the history's end (default: now)"),
            OpenApiParameter(
                "items",
                int,
                description=f"How long until this many more tasks are done (1 to {forecasting.MAX_ITEMS:,})",
            ),
            OpenApiParameter("until", str, description="How many tasks by this date (YYYY-MM-DD, after today)"),
            OpenApiParameter(
                "trials", int, description=f"{forecasting.MIN_TRIALS:,} (default) to {forecasting.MAX_TRIALS:,}"
            ),
            OpenApiParameter("seed", int, description="The same seed, history and question give the same answer"),
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses={200: ForecastSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return forecasting.forecast(workflow, params, board, params["today"])

    def csv_rows(self, data):
        yield ["days" if data["items"] is not None else "tasks", "trials"]
        for bar in data["histogram"]:
            yield [bar["value"], bar["trials"]]


class SleView(FlowView):
    name = "sle"

    @extend_schema(
        parameters=WINDOW_PARAMETERS,
        responses={200: SleSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return analytics.sle(workflow, params["window"], board)

    @extend_schema(
        summary="Set a board's service level for a class of service",
        request=ServiceLevelParams,
        responses={
            200: SleSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            429: ErrorSerializer,
        },
        description="An owner sets the service level of a class of service (85% finish within `days` days);"
        " `days` null goes back to the history's. Answers the service levels of the last 30 days.",
    )
    def put(self, request, pk):
        self.workflow = get_object_or_404(Workflow, pk=pk)
        require_role(request.user, self.workflow.workspace_id, owner=True)
        data = validated(ServiceLevelParams, request.data)
        analytics.set_service_level(workflow=self.workflow, actor=request.user, **data)
        now = timezone.now()
        return Response(analytics.sle(self.workflow, Window(now - DEFAULT_WINDOW, now)))

    def csv_rows(self, data):
        fields = ["class_of_service", "days", "cycle_seconds", "percentile", "sample", "set_by"]
        yield fields
        for row in data["sles"]:
            yield [row[f] for f in fields]


class AdviceView(FlowView):
    name = "advice"

    @extend_schema(
        parameters=WINDOW_PARAMETERS,
        responses={200: AdviceSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return analytics.advice(workflow, params["window"], board)

    def csv_rows(self, data):
        fields = [
            "scope",
            "id",
            "name",
            "limit",
            "avg_wip",
            "throughput_per_day",
            "avg_cycle_days",
            "suggested_limit",
            "arithmetic",
            "at_limit_ratio",
            "never_reached",
            "always_at_limit",
        ]
        yield fields
        for row in data["limits"]:
            yield [row[f] for f in fields]


class BlockersView(FlowView):
    name = "blockers"

    @extend_schema(
        parameters=WINDOW_PARAMETERS,
        responses={200: BlockersSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return analytics.blockers(workflow, params["window"], board)

    def csv_rows(self, data):
        """The reason clusters, then the blocker types (their own columns filled, a type's
        held days as its blocked_days; the untyped blocks' type is "No type")."""
        shared = ["count", "blocked_days", "median_seconds", "ongoing"]
        typed = ["type", "type_id", "capacity_days", "capacity_share"]
        yield ["reason", *shared, *typed]
        for row in data["blockers"]:
            yield [row["reason"], *(row[f] for f in shared), "", "", "", ""]
        for row in data["types"]:
            figures = [row["count"], row["held_days"], row["median_seconds"], row["ongoing"]]
            name = row["name"] if row["type_id"] else "No type"
            yield ["", *figures, name, row["type_id"] or "", row["capacity_days"], row["capacity_share"]]


class EfficiencyView(FlowView):
    name = "efficiency"

    @extend_schema(
        parameters=WINDOW_PARAMETERS,
        responses={200: EfficiencySerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return analytics.efficiency(workflow, params["window"], board)

    def csv_rows(self, data):
        fields = [
            "task_id",
            "title",
            "finished_at",
            "lead_seconds",
            "active_seconds",
            "blocked_seconds",
            "working_seconds",
            "waiting_seconds",
            "efficiency",
        ]
        yield fields
        for item in data["items"]:
            yield [item[f] for f in fields]


class ExperimentsView(FlowView):
    name = "experiments"
    params = ExperimentParams

    @extend_schema(
        summary="Limit experiments: cycle time and throughput before and after each limit change",
        parameters=[
            OpenApiParameter(
                "days",
                int,
                description="The limit changes of the last N days (1 to 183, default 30); at most"
                f" {experiments.MAX_MOMENTS} change moments, else a 400 saying to choose fewer days",
            ),
            OpenApiParameter("format", str, enum=["json", "csv"]),
        ],
        responses={200: ExperimentsSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        return super().get(request, pk)

    def figure(self, workflow, params, board):
        return experiments.experiments(workflow, params["days"], params["now"], board)

    def csv_rows(self, data):
        sides = ["finished", "throughput_per_day", "cycle_sample"]
        percentiles = [f"cycle_p{p}_seconds" for p in ("50", "85", "95")]
        yield [
            "at",
            "actor",
            "changes",
            "span_days",
            *(f"{side}_{f}" for side in ("before", "after") for f in [*sides, *percentiles]),
        ]
        for row in data["experiments"]:
            changes = "; ".join(
                f"{c['scope']} {c['name']} {c['field']} {c['before']} -> {c['after']}" for c in row["changes"]
            )
            values = []
            for side in ("before", "after"):
                values += [row[side][f] for f in sides]
                values += [row[side]["cycle_percentiles"][p] for p in ("50", "85", "95")]
            yield [row["at"], row["actor"], changes, row["span_days"], *values]


class LimitChangesView(FlowView):
    """The configuration history in the window, oldest first, a page at a time: its work is
    bounded by the page, not by the history."""

    name = "limit-changes"
    params = LimitChangesParams

    @extend_schema(
        summary="A board's configuration history (limit and flow rule changes)",
        parameters=[
            *WINDOW_PARAMETERS,
            OpenApiParameter("page", int),
            OpenApiParameter("page_size", int, description=f"1 to {MAX_PAGE_SIZE:,} (default {PAGE_SIZE})"),
        ],
        responses={200: LimitChangesSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 429: ErrorSerializer},
    )
    def get(self, request, pk):
        self.workflow = get_object_or_404(Workflow, pk=pk)
        require_role(request.user, self.workflow.workspace_id)
        params = self.valid_params(asked(request))
        paginator = Pagination()
        page = paginator.paginate_queryset(config.changes(self.workflow, params["window"]), request)
        return paginator.get_paginated_response([_change(c) for c in page])

    def csv_rows(self, data):
        fields = ["at", "actor", "scope", "subject_id", "name", "field", "before", "after"]
        yield fields
        for row in data["results"]:
            yield [", ".join(row[f]) if isinstance(row[f], list) else row[f] for f in fields]  # a group's steps


def _change(change) -> dict:
    return {
        "id": change.pk,
        "at": change.at,
        "actor": change.actor.get_username() if change.actor else None,
        "scope": change.scope,
        "subject_id": change.subject_id,
        "name": change.name,
        "field": change.field,
        "before": change.before,
        "after": change.after,
    }
