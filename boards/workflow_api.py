"""The REST API of workspaces, workflows (a board: its settings, snapshot, history, export),
steps, step groups and templates. Changes to a board go through boards/structure.py."""

from django.http import Http404, HttpResponse
from django.utils.text import slugify
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from boards import sessions, structure
from boards.api import WorkflowEventFilter
from boards.messages import step_data
from boards.selectors import board_events, group_rows, step_counts
from boards.serializers import TaskEventSerializer
from boards.snapshots import board_json
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
from workflows.formats import DOCUMENT_PARSERS, YAMLRenderer
from workflows.models import StepGroup, Workflow, WorkflowStep, Workspace
from workflows.portable import export_document
from workflows.serializers import (
    ImportResultSerializer,
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


class BoardSerializer(serializers.Serializer):
    workflow = BoardWorkflowSerializer()
    agents = BoardAgentsSerializer()
    steps = BoardStepSerializer(many=True)
    groups = StepGroupSerializer(many=True)


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

    @extend_schema(
        request={
            "application/yaml": PortableDocumentSerializer,
            "application/json": PortableDocumentSerializer,
        },
        responses={201: ImportResultSerializer, 400: ErrorSerializer, 413: ErrorSerializer},
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
        workflows = services.workflow_import(workspace=workspace, document=request.data)
        body = {"workflows": [_imported(w) for w in workflows]}
        return Response(body, status=status.HTTP_201_CREATED)


def _imported(workflow: Workflow) -> dict:
    steps = workflow.steps.order_by("position")
    return {
        **WorkflowSerializer(workflow).data,
        "steps": [step_data(s, 0, 0) for s in steps],
        "groups": group_rows(workflow.step_groups.all()),
    }


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
        # Error bodies are JSON everywhere, also where the success body is YAML (export).
        renderer = getattr(request, "accepted_renderer", None)
        # (None: content negotiation itself failed, e.g. ?format=AAA.)
        if response.status_code >= 400 and (renderer is None or isinstance(renderer, YAMLRenderer)):
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["yaml", "json"])],
        responses={200: PortableDocumentSerializer, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["get"], renderer_classes=[YAMLRenderer, JSONRenderer])
    def export(self, request, pk=None):
        workflow = self.get_object()
        filename = f"{slugify(workflow.name) or 'workflow'}.{request.accepted_renderer.format}"
        return Response(
            export_document([workflow]),
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
    """Step groups (product.md §2b.2): a WIP limit shared by several steps of one board."""

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


class TemplateListView(APIView):
    @extend_schema(responses=TemplateSerializer(many=True))
    def get(self, request):
        return Response(catalog())
