"""The REST API of workspaces, workflows (a board: its settings, snapshot, history, export),
steps, step groups, lanes and templates. Changes to a board go through boards/structure.py."""

from django.http import Http404, HttpResponse
from django.utils.text import slugify
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import BaseParser
from rest_framework.response import Response
from rest_framework.views import APIView

from boards import sessions, structure
from boards.api import WorkflowEventFilter
from boards.backup import backup_import, export_backup, result_body
from boards.csv_import import csv_import
from boards.messages import step_data
from boards.selectors import board_events, cell_rows, group_rows, lane_rows, step_counts
from boards.serializers import TaskEventSerializer
from boards.snapshots import board_json
from boards.trello import trello_import
from common.api import ErrorSerializer
from common.errors import Invalid
from common.renderers import JSONRenderer
from common.validation import parse_uuid, validated, whole_number
from workflows import services
from workflows.access import (
    check_role,
    member_object,
    member_step,
    member_workflow,
    memberships_of,
    require_role,
    visible,
    visible_workflows,
    writable,
)
from workflows.catalog import catalog
from workflows.formats import DOCUMENT_PARSERS, JSONDocumentParser, YAMLRenderer, read_limited
from workflows.models import Lane, StepGroup, Workflow, WorkflowStep, Workspace
from workflows.portable import MAX_WORKFLOWS
from workflows.serializers import (
    CellSerializer,
    CellsSerializer,
    ImportResultSerializer,
    LaneSerializer,
    LaneUpdateSerializer,
    PortableDocumentSerializer,
    StepGroupSerializer,
    StepGroupUpdateSerializer,
    StepSerializer,
    StepUpdateSerializer,
    TemplateSerializer,
    WorkflowSerializer,
    WorkflowUpdateSerializer,
    WorkspaceSerializer,
)
from workflows.step_rules import name_errors


class BoardTaskSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    priority = serializers.CharField()
    position = serializers.IntegerField()
    admitted = serializers.BooleanField()
    queued_at = serializers.DateTimeField(allow_null=True)
    is_ephemeral = serializers.BooleanField()
    external_ref = serializers.CharField(allow_null=True)
    assignee_id = serializers.IntegerField(allow_null=True)
    class_of_service = serializers.CharField()
    created_at = serializers.DateTimeField()
    entered_step_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True, help_text="Its cycle's start (first active admission)")
    attachment_count = serializers.IntegerField()
    lane_id = serializers.UUIDField()

    def get_fields(self):
        # A card's `session` is the agents app's to describe (boards/sessions.py).
        return {**super().get_fields(), "session": sessions.registered().serializer(allow_null=True)}


class BoardStepSerializer(StepSerializer):
    tasks = BoardTaskSerializer(many=True)
    tasks_total = serializers.IntegerField(required=False, help_text="With ?per_step=: how many tasks the step holds")


class BoardWorkflowSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    workspace_id = serializers.UUIDField()
    name = serializers.CharField()
    description = serializers.CharField()
    version = serializers.IntegerField()
    expedite_limit = serializers.IntegerField(help_text="Expedite tasks the board admits past a full limit at once")


class BoardAgentsSerializer(serializers.Serializer):
    """Sessions a runner holds (`running`), sessions holding a slot that no runner has claimed
    yet (`unclaimed`) and sessions waiting for a slot (`queued`), with the limits (0 =
    unlimited, bounding running and unclaimed together), for the board and its workspace."""

    running = serializers.IntegerField()
    unclaimed = serializers.IntegerField()
    queued = serializers.IntegerField()
    workflow_limit = serializers.IntegerField()
    workspace_limit = serializers.IntegerField()
    workspace_running = serializers.IntegerField()
    workspace_unclaimed = serializers.IntegerField()
    workspace_queued = serializers.IntegerField()


class BoardCellSerializer(serializers.Serializer):
    lane_id = serializers.UUIDField()
    step_id = serializers.UUIDField()
    wip_limit = serializers.IntegerField()
    occupied = serializers.IntegerField()


class BoardSerializer(serializers.Serializer):
    workflow = BoardWorkflowSerializer()
    agents = BoardAgentsSerializer()
    steps = BoardStepSerializer(many=True)
    groups = StepGroupSerializer(many=True)
    lanes = LaneSerializer(many=True, help_text="The board's rows, in order (the expedite lane first)")
    cells = BoardCellSerializer(many=True, help_text="The cell limits set (a lane in one step)")


class CSVFileParser(BaseParser):
    """A CSV file as its bytes (at most KANDEV_MAX_IMPORT_BYTES): boards/csv_import.py reads it."""

    media_type = "text/csv"

    def parse(self, stream, media_type=None, parser_context=None):
        return read_limited(stream, parser_context)


class ApplicationCSVFileParser(CSVFileParser):
    media_type = "application/csv"


class ImportAnswerSerializer(serializers.Serializer):
    workflow_id = serializers.UUIDField(allow_null=True, help_text="null for a dry run")
    created = serializers.IntegerField()
    queued = serializers.IntegerField()
    forced = serializers.IntegerField()
    archived = serializers.IntegerField()
    refused = serializers.ListField(child=serializers.DictField(), help_text='[{"row", "reason"}]')
    dry_run = serializers.BooleanField()


class CSVImportAnswerSerializer(ImportAnswerSerializer):
    skipped_columns = serializers.ListField(child=serializers.CharField())


class TrelloImportAnswerSerializer(ImportAnswerSerializer):
    skipped = serializers.DictField(child=serializers.IntegerField(), help_text="what kandev has no place for yet")


IMPORT_PARAMETERS = [
    OpenApiParameter("dry_run", bool, description="1: answer what the import would do, and write nothing"),
    OpenApiParameter("name", str, description="The new board's name"),
]


class WorkspaceViewSet(viewsets.ModelViewSet):
    serializer_class = WorkspaceSerializer
    queryset = Workspace.objects.none()  # the model, for the schema; rows come from get_queryset
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self):
        return visible(Workspace.objects.all(), self.request.user, "").order_by("created_at", "id")

    def get_serializer_context(self):
        roles = dict(memberships_of(self.request.user).values_list("workspace_id", "role"))
        return {**super().get_serializer_context(), "roles": roles}

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = services.workspace_create(
            name=data["name"],
            slug=data.get("slug", ""),
            owner=self.request.user,
            max_concurrent_sessions=data.get("max_concurrent_sessions"),
        )

    def perform_update(self, serializer):
        require_role(self.request.user, serializer.instance.pk, owner=True)
        serializer.instance = services.workspace_update(workspace=serializer.instance, **serializer.validated_data)

    def perform_destroy(self, workspace):
        require_role(self.request.user, workspace.pk, owner=True)
        structure.workspace_delete(workspace=workspace)

    def finalize_response(self, request, response, *args, **kwargs):
        return json_errors(super().finalize_response, request, response, *args, **kwargs)

    @extend_schema(
        summary="Export every board of the workspace with its tasks (a backup of the workspace)",
        parameters=[OpenApiParameter("format", str, enum=["yaml", "json"])],
        responses={200: PortableDocumentSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["get"], renderer_classes=[YAMLRenderer, JSONRenderer])
    def export(self, request, pk=None):
        # Who may export one of its boards may export them all: anyone who sees the workspace.
        workspace = self.get_object()
        workflows = list(Workflow.objects.filter(workspace=workspace).order_by("created_at", "id"))
        if len(workflows) > MAX_WORKFLOWS:
            raise Invalid({"workspace": [f"A document holds at most {MAX_WORKFLOWS} boards; export them one by one."]})
        filename = f"{slugify(workspace.name) or 'workspace'}.{request.accepted_renderer.format}"
        return Response(
            export_backup(workflows),
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @extend_schema(
        summary="Import a kandev export (its boards and their tasks)",
        request={
            "application/yaml": PortableDocumentSerializer,
            "application/json": PortableDocumentSerializer,
        },
        parameters=[
            OpenApiParameter("force", bool, description="Owners: admit tasks past full limits, each recorded as forced")
        ],
        responses={
            201: ImportResultSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            409: ErrorSerializer,
            413: ErrorSerializer,
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="workflows/import",
        url_name="import-workflows",
        parser_classes=DOCUMENT_PARSERS,
    )
    def import_workflows(self, request, pk=None):
        workspace = self.get_object()
        # Before the body is read: a viewer's upload is refused unparsed.
        require_role(request.user, workspace.pk, write=True)
        force, dry_run = flag(request.query_params, "force"), flag(request.query_params, "dry_run")
        imported = backup_import(
            workspace=workspace, document=request.data, actor=request.user, force=force, dry_run=dry_run
        )
        if dry_run:  # the boards were rolled back: what they would hold
            body = {"dry_run": True, "workflows": [_previewed(*entry) for entry in imported.boards]}
            return Response({**body, "people": imported.people}, status=status.HTTP_200_OK)
        body = {"workflows": [_imported(*entry) for entry in imported.boards], "people": imported.people}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Import tasks from a CSV file into a new board or an existing one",
        request={"text/csv": str},
        parameters=[
            *IMPORT_PARAMETERS,
            OpenApiParameter("workflow", str, description="An existing board of the workspace to import into"),
        ],
        responses={
            200: CSVImportAnswerSerializer,
            201: CSVImportAnswerSerializer,
            400: ErrorSerializer,
            413: ErrorSerializer,
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="import/csv",
        url_name="import-csv",
        parser_classes=[CSVFileParser, ApplicationCSVFileParser],
    )
    def import_csv(self, request, pk=None):
        workspace = self.get_object()
        require_role(request.user, workspace.pk, write=True)
        dry_run, name = _import_options(request)
        workflow = request.query_params.get("workflow")
        if workflow:
            workflow = member_workflow(request.user, parse_uuid(workflow, "workflow"), "workflow")
            if workflow.workspace_id != workspace.pk:
                raise Invalid({"workflow": ["No such workflow."]})
        raw = request.data if isinstance(request.data, bytes) else b""  # no body: DRF's empty {}
        body = csv_import(
            workspace=workspace, raw=raw, actor=request.user, name=name, workflow=workflow, dry_run=dry_run
        )
        return Response(body, status=status.HTTP_200_OK if dry_run else status.HTTP_201_CREATED)

    @extend_schema(
        summary="Import a Trello board (its JSON export) as a new board",
        request={"application/json": dict},
        parameters=IMPORT_PARAMETERS,
        responses={
            200: TrelloImportAnswerSerializer,
            201: TrelloImportAnswerSerializer,
            400: ErrorSerializer,
            413: ErrorSerializer,
        },
    )
    @action(
        detail=True,
        methods=["post"],
        url_path="import/trello",
        url_name="import-trello",
        parser_classes=[JSONDocumentParser],
    )
    def import_trello(self, request, pk=None):
        workspace = self.get_object()
        require_role(request.user, workspace.pk, write=True)
        dry_run, name = _import_options(request)
        body = trello_import(workspace=workspace, document=request.data, actor=request.user, name=name, dry_run=dry_run)
        return Response(body, status=status.HTTP_200_OK if dry_run else status.HTTP_201_CREATED)


def _import_options(request) -> tuple[bool, str]:
    name = request.query_params.get("name", "").strip()
    if name and name_errors(name):
        raise Invalid({"name": name_errors(name)})
    return flag(request.query_params, "dry_run"), name


def _imported(workflow: Workflow, result, unassigned) -> dict:
    steps = workflow.steps.order_by("position")
    counts = step_counts([s.pk for s in steps])
    return {
        **WorkflowSerializer(workflow).data,
        "steps": [step_data(s, *counts[s.pk]) for s in steps],
        "groups": group_rows(workflow.step_groups.all()),
        "tasks": result_body(workflow, result, unassigned),
    }


def _previewed(workflow: Workflow, result, unassigned) -> dict:
    return {"name": workflow.name, "tasks": result_body(workflow, result, unassigned)}


def json_errors(finalize, request, response, *args, **kwargs):
    """Error bodies are JSON everywhere, also where the success body is YAML (an export)."""
    renderer = getattr(request, "accepted_renderer", None)
    # (None: content negotiation itself failed, e.g. ?format=AAA.)
    if response.status_code >= 400 and (renderer is None or isinstance(renderer, YAMLRenderer)):
        request.accepted_renderer = JSONRenderer()
        request.accepted_media_type = JSONRenderer.media_type
    return finalize(request, response, *args, **kwargs)


def flag(params, name: str) -> bool:
    """A yes/no query parameter: 1/true/yes or 0/false/no (absent: no); anything else is a 400."""
    value = params.get(name, "0").strip().lower()
    if value not in {"1", "true", "yes", "0", "false", "no", ""}:
        raise Invalid({name: ["Must be 1 or 0."]})
    return value in {"1", "true", "yes"}


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("workspace", str, description="Workspace id")]),
)
class WorkflowViewSet(viewsets.ModelViewSet):
    serializer_class = WorkflowSerializer
    list_params = ("workspace",)  # read by get_queryset
    queryset = Workflow.objects.none()  # the model, for the schema; rows come from get_queryset
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self):
        queryset = visible_workflows(self.request.user)
        workspace = self.request.query_params.get("workspace")
        if self.action == "list" and workspace:
            queryset = queryset.filter(workspace_id=parse_uuid(workspace, "workspace"))
        return queryset.order_by("created_at", "id")

    def get_serializer_class(self):
        return WorkflowUpdateSerializer if self.action == "partial_update" else WorkflowSerializer

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        workspace = visible(Workspace.objects.all(), self.request.user, "").filter(pk=data.pop("workspace_id")).first()
        if workspace is None:
            raise Invalid({"workspace_id": ["No such workspace."]})
        require_role(self.request.user, workspace.pk, write=True)
        serializer.instance = services.workflow_create(workspace=workspace, **data)

    def perform_update(self, serializer):
        workflow = serializer.instance
        require_role(self.request.user, workflow.workspace_id, write=True)
        serializer.instance = structure.workflow_update(
            workflow=workflow, actor=self.request.user, **serializer.validated_data
        )

    def perform_destroy(self, workflow):
        # A whole board holds everyone's tasks: members may delete tasks, only owners boards.
        require_role(self.request.user, workflow.workspace_id, owner=True)
        structure.workflow_delete(workflow=workflow)

    def finalize_response(self, request, response, *args, **kwargs):
        return json_errors(super().finalize_response, request, response, *args, **kwargs)

    @extend_schema(
        summary="Export the board with its tasks (a backup), or its structure alone",
        parameters=[
            OpenApiParameter("format", str, enum=["yaml", "json"]),
            OpenApiParameter("tasks", bool, description="0: the steps and limits only, as a template"),
        ],
        responses={200: PortableDocumentSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["get"], renderer_classes=[YAMLRenderer, JSONRenderer])
    def export(self, request, pk=None):
        workflow = self.get_object()
        tasks = flag(request.query_params, "tasks") if "tasks" in request.query_params else True
        filename = f"{slugify(workflow.name) or 'workflow'}.{request.accepted_renderer.format}"
        return Response(
            export_backup([workflow], tasks=tasks),
            headers={"Content-Disposition": f'attachment; filename="{filename}"'},
        )

    @extend_schema(
        responses=BoardSerializer,
        parameters=[OpenApiParameter("per_step", int, description="Only the first N tasks of each step (1-1000)")],
    )
    @action(detail=True, methods=["get"])
    def board(self, request, pk=None):
        per_step = request.query_params.get("per_step")
        if per_step is not None:
            per_step = whole_number(per_step)
            if per_step is None or not 1 <= per_step <= 1000:
                raise Invalid({"per_step": ["A whole number from 1 to 1000."]})
        # Hand-written, not get_object()'s ORM query: this read runs after every change
        # (boards/snapshots.py), and its one query is where it learns the board's version.
        workflow = member_object(Workflow, request.user, pk)
        if workflow is None:
            raise Http404
        _version, encoded = board_json(workflow=workflow, per_step=per_step)
        return HttpResponse(encoded, content_type="application/json")  # JSON already: one encoding per version

    @extend_schema(
        responses=TaskEventSerializer(many=True),
        parameters=[
            OpenApiParameter("kind", str),
            OpenApiParameter("task", str),
            OpenApiParameter("step", str),
            OpenApiParameter("since", str, description="ISO 8601 date-time"),
            OpenApiParameter("until", str, description="ISO 8601 date-time"),
        ],
    )
    @action(detail=True, methods=["get"], list_params=tuple(WorkflowEventFilter.base_filters))
    def events(self, request, pk=None):
        workflow = self.get_object()
        events = WorkflowEventFilter(request.query_params, queryset=board_events(workflow=workflow))
        if not events.is_valid():
            raise Invalid({k: list(v) for k, v in events.errors.items()})
        page = self.paginate_queryset(events.qs)
        return self.get_paginated_response(TaskEventSerializer(page, many=True).data)


def _step_response(step: WorkflowStep, status_code=status.HTTP_200_OK) -> Response:
    occupied, queued = step_counts([step.pk])[step.pk]
    return Response(step_data(step, occupied, queued), status=status_code)


def _of_workflow(view, queryset):
    """A list narrowed to one board by `?workflow=<id>` (the steps' and the step groups')."""
    workflow = view.request.query_params.get("workflow")
    if view.action == "list" and workflow:
        return queryset.filter(workflow_id=parse_uuid(workflow, "workflow"))
    return queryset


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("workflow", str, description="Workflow id")],
        responses=StepSerializer(many=True),
    ),
    retrieve=extend_schema(responses=StepSerializer),
)
class StepViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = StepSerializer
    list_params = ("workflow",)  # _of_workflow
    queryset = WorkflowStep.objects.none()  # the model, for the schema; rows come from get_queryset

    def get_queryset(self):
        queryset = _of_workflow(self, visible(WorkflowStep.objects.all(), self.request.user))
        return queryset.select_related("workflow").order_by("workflow__created_at", "workflow_id", "position")

    def list(self, request):
        page = self.paginate_queryset(self.get_queryset())
        counts = step_counts([s.pk for s in page])
        return self.get_paginated_response([step_data(s, *counts[s.pk]) for s in page])

    def retrieve(self, request, pk=None):
        return _step_response(self.get_object())

    @extend_schema(request=StepSerializer, responses={201: StepSerializer, 400: ErrorSerializer})
    def create(self, request):
        data = dict(validated(StepSerializer, request.data))
        workflow = visible_workflows(request.user).filter(pk=data.pop("workflow_id")).first()
        if workflow is None:
            raise Invalid({"workflow_id": ["No such workflow."]})
        require_role(request.user, workflow.workspace_id, write=True)
        step = structure.step_create(workflow=workflow, actor=request.user, **data)
        return _step_response(step, status.HTTP_201_CREATED)

    @extend_schema(request=StepUpdateSerializer, responses={200: StepSerializer, 400: ErrorSerializer})
    def partial_update(self, request, pk=None):
        step = self.get_object()
        require_role(request.user, step.workflow.workspace_id, write=True)
        data = validated(StepUpdateSerializer, request.data, partial=True)
        step = structure.step_update(step=step, actor=request.user, **data)
        return _step_response(step)

    @extend_schema(
        parameters=[OpenApiParameter("move_tasks_to", str, description="Step to move the live tasks to")],
        responses={204: None, 409: ErrorSerializer},
    )
    def destroy(self, request, pk=None):
        step = self.get_object()
        require_role(request.user, step.workflow.workspace_id, write=True)
        target_id = request.query_params.get("move_tasks_to")
        target = None
        if target_id:
            target = member_step(request.user, parse_uuid(target_id, "move_tasks_to"), "move_tasks_to")
        structure.step_delete(step=step, actor=request.user, move_tasks_to=target)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _group_response(group: StepGroup, status_code=status.HTTP_200_OK) -> Response:
    return Response(group_rows([group])[0], status=status_code)


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("workflow", str, description="Workflow id")],
        responses=StepGroupSerializer(many=True),
    ),
    retrieve=extend_schema(responses={200: StepGroupSerializer, 404: ErrorSerializer}),
)
class StepGroupViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Step groups: a WIP limit shared by several steps of one board."""

    serializer_class = StepGroupSerializer
    list_params = ("workflow",)  # _of_workflow
    queryset = StepGroup.objects.none()  # the model, for the schema; rows come from get_queryset

    def get_queryset(self):
        queryset = _of_workflow(self, visible(StepGroup.objects.all(), self.request.user))
        return queryset.order_by("workflow__created_at", "workflow_id", "created_at", "id")

    def list(self, request):
        return self.get_paginated_response(group_rows(self.paginate_queryset(self.get_queryset())))

    def retrieve(self, request, pk=None):
        group = member_object(StepGroup, request.user, pk)
        if group is None:
            raise Http404
        return _group_response(group)

    @extend_schema(request=StepGroupSerializer, responses={201: StepGroupSerializer, 400: ErrorSerializer})
    def create(self, request):
        data = dict(validated(StepGroupSerializer, request.data))
        workflow = member_workflow(request.user, data.pop("workflow_id"))
        check_role(workflow.member_role, write=True)
        group = structure.group_create(workflow=workflow, actor=request.user, **data)
        return _group_response(group, status.HTTP_201_CREATED)

    @extend_schema(
        request=StepGroupUpdateSerializer,
        responses={200: StepGroupSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def partial_update(self, request, pk=None):
        group = writable(StepGroup, request.user, pk)
        data = validated(StepGroupUpdateSerializer, request.data, partial=True)
        return _group_response(structure.group_update(group=group, actor=request.user, **data))

    @extend_schema(responses={204: None, 404: ErrorSerializer})
    def destroy(self, request, pk=None):
        structure.group_delete(group=writable(StepGroup, request.user, pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _lane_response(lane: Lane, status_code=status.HTTP_200_OK) -> Response:
    return Response(lane_rows([lane])[0], status=status_code)


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("workflow", str, description="Workflow id")],
        responses=LaneSerializer(many=True),
    ),
    retrieve=extend_schema(responses={200: LaneSerializer, 404: ErrorSerializer}),
)
class LaneViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Lanes: a board's rows, each with an optional WIP limit over its tasks in active steps,
    and cell limits (the lane in one step)."""

    serializer_class = LaneSerializer
    list_params = ("workflow",)  # _of_workflow
    queryset = Lane.objects.none()  # the model, for the schema; rows come from get_queryset

    def get_queryset(self):
        queryset = _of_workflow(self, visible(Lane.objects.all(), self.request.user))
        return queryset.order_by("workflow__created_at", "workflow_id", "position", "created_at", "id")

    def list(self, request):
        return self.get_paginated_response(lane_rows(self.paginate_queryset(self.get_queryset())))

    def retrieve(self, request, pk=None):
        lane = member_object(Lane, request.user, pk)
        if lane is None:
            raise Http404
        return _lane_response(lane)

    @extend_schema(request=LaneSerializer, responses={201: LaneSerializer, 400: ErrorSerializer})
    def create(self, request):
        data = dict(validated(LaneSerializer, request.data))
        workflow = member_workflow(request.user, data.pop("workflow_id"))
        check_role(workflow.member_role, write=True)
        lane = structure.lane_create(workflow=workflow, actor=request.user, **data)
        return _lane_response(lane, status.HTTP_201_CREATED)

    @extend_schema(
        request=LaneUpdateSerializer,
        responses={200: LaneSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def partial_update(self, request, pk=None):
        lane = writable(Lane, request.user, pk)
        data = validated(LaneUpdateSerializer, request.data, partial=True)
        return _lane_response(structure.lane_update(lane=lane, actor=request.user, **data))

    @extend_schema(
        parameters=[OpenApiParameter("move_tasks_to", str, description="Lane to move its live tasks to")],
        responses={204: None, 400: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
    )
    def destroy(self, request, pk=None):
        lane = writable(Lane, request.user, pk)
        target = request.query_params.get("move_tasks_to")
        target = parse_uuid(target, "move_tasks_to") if target else None
        structure.lane_delete(lane=lane, actor=request.user, move_tasks_to=target)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(methods=["GET"], request=None, responses={200: CellSerializer(many=True)})
    @extend_schema(
        methods=["PUT"],
        request=CellSerializer(many=True),
        responses={200: CellSerializer(many=True), 400: ErrorSerializer, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["get", "put"], pagination_class=None, filter_backends=[])
    def cells(self, request, pk=None):
        if request.method == "PUT":
            lane = writable(Lane, request.user, pk)
            data = validated(CellsSerializer, {"cells": request.data})
            structure.cells_set(lane=lane, actor=request.user, cells=data["cells"])
        else:
            lane = member_object(Lane, request.user, pk)
            if lane is None:
                raise Http404
        return Response(cell_rows(lane))


class TemplateListView(APIView):
    @extend_schema(responses=TemplateSerializer(many=True))
    def get(self, request):
        return Response(catalog())
