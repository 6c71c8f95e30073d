"""REST API of notifications: watching a task, the inbox, and a workspace's outbound
webhooks (owners only; other members get 403, non-members 404)."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from boards.models import Task
from common.api import ErrorSerializer
from common.errors import Invalid
from common.validation import parse_uuid, validated
from notifications import news, watching, webhooks
from notifications.models import Notification, Webhook
from notifications.serializers import (
    MarkedSerializer,
    MarkReadSerializer,
    NotificationSerializer,
    WatchingSerializer,
    WebhookCreatedSerializer,
    WebhookSerializer,
    WebhookUpdateSerializer,
)
from workflows.access import member_object, require_role, visible
from workflows.models import Role, Workspace


class WatchView(APIView):
    watching = True

    @extend_schema(request=None, responses={200: WatchingSerializer, 404: ErrorSerializer})
    def post(self, request, task_id):
        """Anyone who can see the task may watch or unwatch it; the choice stands."""
        task = member_object(Task, request.user, task_id)
        if task is None:
            raise Http404
        watching.set_watching(user=request.user, task=task, watching=self.watching)
        return Response({"task_id": task.pk, "watching": self.watching})


class UnwatchView(WatchView):
    watching = False


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("unread", bool, description="true: only unread; false: only read")])
)
class NotificationViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """Your inbox, newest first."""

    serializer_class = NotificationSerializer
    queryset = Notification.objects.none()
    list_params = ("unread",)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Notification.objects.none()
        found = Notification.objects.filter(recipient=self.request.user, in_inbox=True).select_related("actor")
        unread = self.request.query_params.get("unread")
        if unread is not None:
            if unread not in ("true", "false", "1", "0"):
                raise Invalid({"unread": ["Must be true or false."]})
            found = found.filter(read_at__isnull=unread in ("true", "1"))
        return found.order_by("-at", "-id")


class MarkReadView(APIView):
    @extend_schema(request=MarkReadSerializer, responses={200: MarkedSerializer, 400: ErrorSerializer})
    def post(self, request):
        """Mark some of your notifications read (`ids`), or all of them (`all`)."""
        data = validated(MarkReadSerializer, request.data)
        marked = news.mark_read(request.user, ids=None if data.get("all") else data["ids"])
        return Response({"marked": marked, "unread": news.unread_count(request.user)})


@extend_schema_view(
    list=extend_schema(parameters=[OpenApiParameter("workspace", str, description="Workspace id")]),
)
class WebhookViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = WebhookSerializer
    queryset = Webhook.objects.none()
    list_params = ("workspace",)
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_serializer_class(self):
        return WebhookUpdateSerializer if self.action == "partial_update" else WebhookSerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Webhook.objects.none()
        user = self.request.user
        if self.action != "list":  # another's webhook is a 403 (get_object), a stranger's a 404
            found = visible(Webhook.objects.all(), user, workspace="workspace")
        else:  # the workspaces you own: one join, the same membership row
            found = Webhook.objects.filter(workspace__memberships__user=user, workspace__memberships__role=Role.OWNER)
            workspace = self.request.query_params.get("workspace")
            if workspace:
                found = found.filter(workspace_id=parse_uuid(workspace, "workspace"))
        return found.select_related("created_by").order_by("created_at", "id")

    def get_object(self):
        webhook = super().get_object()
        require_role(self.request.user, webhook.workspace_id, owner=True)
        return webhook

    @extend_schema(
        request=WebhookSerializer,
        responses={201: WebhookCreatedSerializer, 400: ErrorSerializer, 403: ErrorSerializer},
    )
    def create(self, request):
        data = validated(WebhookSerializer, request.data)
        workspace = visible(Workspace.objects.all(), request.user, "").filter(pk=data["workspace_id"]).first()
        if workspace is None:
            raise Invalid({"workspace_id": ["No such workspace."]})
        webhook, secret = webhooks.webhook_create(
            workspace=workspace, url=data["url"], events=data["events"], actor=request.user
        )
        return Response({**WebhookSerializer(webhook).data, "secret": secret}, status=status.HTTP_201_CREATED)

    def perform_update(self, serializer):
        data = serializer.validated_data
        serializer.instance = webhooks.webhook_update(
            webhook=serializer.instance, actor=self.request.user, url=data.get("url"), events=data.get("events")
        )

    def perform_destroy(self, instance):
        webhooks.webhook_delete(webhook=instance, actor=self.request.user)
