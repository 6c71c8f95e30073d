import django_filters
from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import ApiToken
from agents import services
from agents.models import AgentSession, SessionStatus
from agents.selectors import claim_data, session_data
from boards.models import Task
from common.api import ErrorSerializer
from common.validation import validated
from workflows.access import require_role, visible


class SessionSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    task_id = serializers.UUIDField(allow_null=True)
    workflow_id = serializers.UUIDField()
    step_id = serializers.UUIDField(allow_null=True)
    status = serializers.ChoiceField(choices=SessionStatus.choices)
    runner = serializers.CharField()
    queued_at = serializers.DateTimeField(allow_null=True)
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    lease_expires_at = serializers.DateTimeField(allow_null=True)
    detail = serializers.CharField()
    forced = serializers.BooleanField()
    reason = serializers.CharField()

    def to_representation(self, instance):
        return session_data(instance)


class StartSerializer(serializers.Serializer):
    force = serializers.BooleanField(default=False)
    reason = serializers.CharField(default="", allow_blank=True, max_length=2000)


class ClaimSerializer(serializers.Serializer):
    runner = serializers.CharField(required=False, max_length=200, help_text="The runner's name.")


class EventSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=services.EVENT_TYPES)
    detail = serializers.CharField(default="", allow_blank=True, max_length=20_000)


class CancelSerializer(serializers.Serializer):
    reason = serializers.CharField(default="", allow_blank=True, max_length=2000)


class SessionFilter(django_filters.FilterSet):
    workflow = django_filters.UUIDFilter(field_name="workflow_id")
    task = django_filters.UUIDFilter(field_name="task_id")
    status = django_filters.ChoiceFilter(choices=SessionStatus.choices)

    class Meta:
        model = AgentSession
        fields = []


def token_scope(request):
    """The workspace a runner token is scoped to, or None."""
    return request.auth.workspace_id if isinstance(request.auth, ApiToken) else None


class SessionViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Agent sessions and the runner protocol."""

    serializer_class = SessionSerializer
    filterset_class = SessionFilter
    queryset = AgentSession.objects.none()  # the model, for the schema; rows come from get_queryset
    runner_endpoint = True

    def get_queryset(self):
        queryset = visible(AgentSession.objects.all(), self.request.user)
        scope = token_scope(self.request)
        if scope is not None:
            queryset = queryset.filter(workflow__workspace_id=scope)
        return queryset.select_related("workflow").order_by("created_at", "id")

    def writable_session(self) -> AgentSession:
        session = self.get_object()
        require_role(self.request.user, session.workflow.workspace_id, write=True)
        return session

    @extend_schema(
        request=ClaimSerializer,
        responses={200: SessionSerializer, 204: OpenApiResponse(description="Nothing to run.")},
    )
    @action(detail=False, methods=["post"], filterset_class=None)
    def claim(self, request):
        data = validated(ClaimSerializer, request.data)
        runner = data.get("runner") or (request.auth.name if isinstance(request.auth, ApiToken) else "")
        session = services.session_claim(
            user=request.user,
            runner=runner or request.user.get_username(),
            workspace_id=token_scope(request),
        )
        if session is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        session = AgentSession.objects.select_related("task", "step", "workflow").get(pk=session.pk)
        return Response(claim_data(session, lease_seconds=settings.KANDEV_SESSION_LEASE_SECONDS))

    @extend_schema(request=EventSerializer, responses={200: SessionSerializer, 409: ErrorSerializer})
    @action(detail=True, methods=["post"], filterset_class=None)
    def events(self, request, pk=None):
        session = self.writable_session()
        data = validated(EventSerializer, request.data)
        if data["type"] == "heartbeat":
            session = services.session_heartbeat(session=session)
        else:
            session = services.session_event(
                session=session, type=data["type"], detail=data["detail"], actor=request.user
            )
        return Response(session_data(session))

    @extend_schema(request=CancelSerializer, responses={200: SessionSerializer, 409: ErrorSerializer})
    @action(detail=True, methods=["post"], filterset_class=None)
    def cancel(self, request, pk=None):
        session = self.writable_session()
        data = validated(CancelSerializer, request.data)
        session = services.session_cancel(session=session, actor=request.user, reason=data["reason"])
        return Response(session_data(session))


class TaskSessionsView(APIView):
    """POST /api/v1/tasks/{id}/sessions/: start a session by hand."""

    @extend_schema(
        request=StartSerializer,
        responses={
            201: SessionSerializer,
            202: SessionSerializer,
            403: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request, task_id):
        task = visible(Task.objects.all(), request.user).filter(pk=task_id).select_related("workflow").first()
        if task is None:
            raise NotFound
        require_role(request.user, task.workflow.workspace_id, write=True)
        data = validated(StartSerializer, request.data)
        session = services.session_start(task=task, actor=request.user, force=data["force"], reason=data["reason"])
        code = status.HTTP_202_ACCEPTED if session.status == SessionStatus.QUEUED else status.HTTP_201_CREATED
        return Response(session_data(session), status=code)
