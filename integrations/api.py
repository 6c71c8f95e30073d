"""REST API of integrations: intakes and review watches. Members write, viewers read,
non-members see nothing (404). Owners take over one whose creator's authority ended
(`take-over/`); an intake's creator or an owner rotates its secret (`rotate-secret/`)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from common.api import ErrorSerializer
from common.errors import Invalid
from common.validation import parse_uuid, validated
from integrations import credentials
from integrations import watch as watches
from integrations.intake import intake_create, intake_rotate_secret
from integrations.models import Intake, ReviewWatch
from integrations.serializers import (
    IntakeCreatedSerializer,
    IntakeSerializer,
    ReviewWatchSerializer,
    ReviewWatchTakeOverSerializer,
    ReviewWatchUpdateSerializer,
)
from workflows.access import require_role, visible, visible_workflows
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
        return queryset.select_related("workflow", "created_by").order_by("created_at", "id")

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

    @extend_schema(request=None, responses={200: IntakeCreatedSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    @action(detail=True, methods=["post"], url_path="take-over")
    def take_over(self, request, pk=None):
        """An owner makes the intake theirs and enables it again, with a new secret (shown once)."""
        intake = self.get_object()
        require_role(request.user, intake.workflow.workspace_id, owner=True)
        intake, secret = intake_rotate_secret(intake=intake, actor=request.user, take_over=True)
        return Response({**IntakeSerializer(intake).data, "secret": secret})

    @extend_schema(request=None, responses={200: IntakeCreatedSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    @action(detail=True, methods=["post"], url_path="rotate-secret")
    def rotate_secret(self, request, pk=None):
        """A new secret, shown once; the old one stops verifying at once."""
        intake = self.get_object()
        credentials.require_keeper(request.user, intake, to="rotate the intake's secret")
        intake, secret = intake_rotate_secret(intake=intake, actor=request.user)
        return Response({**IntakeSerializer(intake).data, "secret": secret})


@extend_schema_view(list=extend_schema(parameters=WORKFLOW_FILTER))
class ReviewWatchViewSet(MemberQuerysetMixin, viewsets.ModelViewSet):
    model = ReviewWatch
    serializer_class = ReviewWatchSerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_serializer_class(self):
        return ReviewWatchUpdateSerializer if self.action == "partial_update" else ReviewWatchSerializer

    @extend_schema(
        request=ReviewWatchTakeOverSerializer,
        responses={200: ReviewWatchSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["post"], url_path="take-over")
    def take_over(self, request, pk=None):
        """An owner makes the watch theirs and enables it again, with their own token."""
        watch = self.get_object()
        require_role(request.user, watch.workflow.workspace_id, owner=True)
        data = validated(ReviewWatchTakeOverSerializer, request.data)
        watch = watches.watch_take_over(watch=watch, actor=request.user, token=data["token"])
        return Response(ReviewWatchSerializer(watch).data)

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
