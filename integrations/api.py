"""REST API of integrations: intakes and review watches. Members write, viewers read,
non-members see nothing (404)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response

from boards.access import require_role, visible, visible_workflows
from integrations import watch as watches
from integrations.intake import intake_create
from integrations.models import Intake, ReviewWatch
from integrations.serializers import (
    IntakeCreatedSerializer,
    IntakeSerializer,
    ReviewWatchSerializer,
    ReviewWatchUpdateSerializer,
)
from kandev.api import ErrorSerializer
from kandev.errors import Invalid
from kandev.validation import parse_uuid, validated
from workflows.models import Workflow, WorkflowStep

WORKFLOW_FILTER = [OpenApiParameter("workflow", str, description="Workflow id")]


def writable_target(user, workflow_id, step_id) -> tuple[Workflow, WorkflowStep | None]:
    """The workflow (and optional step of it) a member may point an integration at."""
    workflow = visible_workflows(user).filter(pk=workflow_id).first()
    if workflow is None:
        raise Invalid({"workflow_id": ["No such workflow."]})
    require_role(user, workflow.workspace_id, write=True)
    step = None
    if step_id is not None:
        step = WorkflowStep.objects.filter(pk=step_id, workflow=workflow).first()
        if step is None:
            raise Invalid({"step_id": ["No such step in this workflow."]})
    return workflow, step


class MemberQuerysetMixin:
    model = None
    list_params = ("workflow",)  # read by get_queryset

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return self.model.objects.none()
        queryset = visible(self.model.objects.all(), self.request.user)
        workflow = self.request.query_params.get("workflow")
        if self.action == "list" and workflow:
            queryset = queryset.filter(workflow_id=parse_uuid(workflow, "workflow"))
        return queryset.select_related("workflow").order_by("created_at", "id")

    def perform_destroy(self, instance):
        require_role(self.request.user, instance.workflow.workspace_id, write=True)
        instance.delete()


@extend_schema_view(list=extend_schema(parameters=WORKFLOW_FILTER))
class IntakeViewSet(
    MemberQuerysetMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    model = Intake
    serializer_class = IntakeSerializer

    @extend_schema(responses={201: IntakeCreatedSerializer, 400: ErrorSerializer, 403: ErrorSerializer})
    def create(self, request):
        data = validated(IntakeSerializer, request.data)
        workflow, step = writable_target(request.user, data["workflow_id"], data.get("step_id"))
        intake, secret = intake_create(workflow=workflow, step=step, actor=request.user, name=data.get("name", ""))
        body = {**IntakeSerializer(intake).data, "secret": secret}
        return Response(body, status=status.HTTP_201_CREATED)


@extend_schema_view(list=extend_schema(parameters=WORKFLOW_FILTER))
class ReviewWatchViewSet(MemberQuerysetMixin, viewsets.ModelViewSet):
    model = ReviewWatch
    serializer_class = ReviewWatchSerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_serializer_class(self):
        return ReviewWatchUpdateSerializer if self.action == "partial_update" else ReviewWatchSerializer

    def perform_create(self, serializer):
        data = dict(serializer.validated_data)
        workflow, step = writable_target(self.request.user, data.pop("workflow_id"), data.pop("step_id", None))
        serializer.instance = watches.watch_create(workflow=workflow, step=step, actor=self.request.user, **data)

    def perform_update(self, serializer):
        watch = serializer.instance
        data = dict(serializer.validated_data)
        require_role(self.request.user, watch.workflow.workspace_id, write=True)
        if "step_id" in data:
            _, data["step"] = writable_target(self.request.user, watch.workflow_id, data.pop("step_id"))
        serializer.instance = watches.watch_update(watch=watch, actor=self.request.user, **data)
