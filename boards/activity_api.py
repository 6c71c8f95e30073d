"""The activity feed's doors: `GET /api/v1/workflows/{id}/activity/` and
`GET /api/v1/workspaces/{id}/activity/` (boards/activity.py reads it)."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from boards.activity import KINDS, Filters, activity
from common.errors import Invalid
from common.validation import validated
from workflows import access
from workflows.models import Workflow

PAGE_SIZE, PAGE_SIZE_MAX = 50, 100


class ActivityQuerySerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=KINDS, required=False)
    person = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False)
    task = serializers.UUIDField(required=False)
    mentions = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False)
    cursor = serializers.CharField(max_length=300, required=False)
    page_size = serializers.IntegerField(min_value=1, max_value=PAGE_SIZE_MAX, default=PAGE_SIZE)
    format = serializers.CharField(required=False)  # the renderer's own parameter


class ActivityItemSerializer(serializers.Serializer):
    id = serializers.CharField(help_text='"event-<id>" or "comment-<id>"')
    kind = serializers.ChoiceField(choices=KINDS)
    at = serializers.DateTimeField()
    actor = serializers.CharField(allow_null=True, help_text="username; null for automation")
    workflow_id = serializers.UUIDField()
    task_id = serializers.UUIDField()
    task_title = serializers.CharField(allow_null=True)
    event = serializers.JSONField(
        allow_null=True, help_text="{id, from_step_id, from_step_name, to_step_id, to_step_name, reason, detail}"
    )
    comment = serializers.JSONField(allow_null=True, help_text="the comment, as GET /tasks/{id}/comments/ lists it")


class ActivityPageSerializer(serializers.Serializer):
    next = serializers.URLField(allow_null=True)
    results = ActivityItemSerializer(many=True)


PARAMETERS = [
    OpenApiParameter("kind", str, enum=KINDS),
    OpenApiParameter("person", int, description="a user id: what they did"),
    OpenApiParameter("task", str, description="one task's id"),
    OpenApiParameter("mentions", int, description="a user id: comments that mention them"),
    OpenApiParameter("cursor", str, description="the `next` link's cursor"),
    OpenApiParameter("page_size", int, description=f"up to {PAGE_SIZE_MAX} (default {PAGE_SIZE})"),
]


class FeedView(APIView):
    def feed(self, request, workflows) -> Response:
        unknown = sorted(set(request.query_params) - set(ActivityQuerySerializer().fields))
        if unknown:
            raise Invalid({name: ["Unknown query parameter."] for name in unknown})
        query = validated(ActivityQuerySerializer, request.query_params)
        filters = Filters(
            kind=query.get("kind"), person=query.get("person"), task=query.get("task"), mentions=query.get("mentions")
        )
        size, cursor = query["page_size"], query.get("cursor")
        items, cursor = activity(workflows=workflows, filters=filters, size=size, cursor=cursor)
        url = request.build_absolute_uri()
        next_url = None
        if cursor is not None:
            params = request.query_params.copy()
            params["cursor"] = cursor
            next_url = f"{url.split('?')[0]}?{params.urlencode()}"
        return Response({"next": next_url, "results": items})


class WorkflowActivityView(FeedView):
    @extend_schema(
        summary="A board's activity feed (history and comments, newest first)",
        parameters=PARAMETERS,
        responses=ActivityPageSerializer,
    )
    def get(self, request, pk):
        workflow = access.member_object(Workflow, request.user, pk)
        if workflow is None:
            raise Http404
        return self.feed(request, [workflow.pk])


class WorkspaceActivityView(FeedView):
    @extend_schema(
        summary="A workspace's activity feed (every board's history and comments, newest first)",
        parameters=PARAMETERS,
        responses=ActivityPageSerializer,
    )
    def get(self, request, pk):
        access.require_role(request.user, pk)
        return self.feed(request, access.visible_workflows(request.user).filter(workspace_id=pk).values("pk"))
