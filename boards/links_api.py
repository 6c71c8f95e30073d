"""REST for dependencies: `GET/POST /api/v1/tasks/{id}/links/`, `DELETE /api/v1/links/{id}/`."""

from django.db.models import F
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from boards.links import link_create, link_data, link_delete, links_of
from boards.models import Task, TaskLink
from common.api import ErrorSerializer
from common.errors import Invalid
from common.validation import validated
from workflows import access
from workflows.access import check_role, visible


class LinkCreateSerializer(serializers.Serializer):
    """The other task of the link: the one this task blocks, or the one it is blocked by."""

    blocks_task_id = serializers.UUIDField(required=False)
    blocked_by_task_id = serializers.UUIDField(required=False)

    def validate(self, attrs):
        if len(attrs) != 1:
            message = "Give blocks_task_id or blocked_by_task_id (one of them)."
            raise serializers.ValidationError({name: [message] for name in ("blocks_task_id", "blocked_by_task_id")})
        return attrs


class LinkedTaskSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    title = serializers.CharField()
    workflow_id = serializers.UUIDField()
    step_id = serializers.UUIDField()
    finished = serializers.BooleanField(help_text="In a done step, or archived: it blocks nothing.")


class LinkSerializer(serializers.Serializer):
    """Output shape of a link: `blocker` blocks `dependent`."""

    id = serializers.UUIDField()
    blocker_id = serializers.UUIDField()
    dependent_id = serializers.UUIDField()
    blocker = LinkedTaskSerializer()
    dependent = LinkedTaskSerializer()
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()


class TaskLinksView(GenericAPIView):
    """A task's links: the tasks it blocks and the tasks it is blocked by."""

    serializer_class = LinkSerializer
    queryset = TaskLink.objects.none()  # for the schema; rows come from links_of()

    @extend_schema(summary="A task's links (blocks / blocked by)", responses=LinkSerializer(many=True))
    def get(self, request, task_id):
        task = visible(Task.objects.all(), request.user).filter(pk=task_id).first()
        if task is None:
            raise Http404
        page = self.paginate_queryset(links_of(task))
        return self.get_paginated_response([link_data(link) for link in page])

    @extend_schema(
        summary="Link a task: the task it blocks, or the task it is blocked by",
        request=LinkCreateSerializer,
        responses={201: LinkSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def post(self, request, task_id):
        link = create_link(request.user, task_id, request.data)
        return Response(link_data(link), status=status.HTTP_201_CREATED)


def create_link(user, task_id, body) -> TaskLink:
    """A link from a request (REST or MCP): `task_id`'s task, which `user` may write (404, 403),
    and the other task the body names (a 400 on its field unless `user` sees it)."""
    task = access.writable(Task, user, task_id)
    data = validated(LinkCreateSerializer, body)
    ((field, other_id),) = data.items()
    other = access.member_object(Task, user, other_id)
    if other is None:
        raise Invalid({field: ["No such task."]})
    blocker, dependent = (task, other) if field == "blocks_task_id" else (other, task)
    return link_create(blocker=blocker, dependent=dependent, actor=user, field=field)


def writable_link(user, link_id) -> TaskLink:
    """A link `user` may remove: 404 unless a member of its workspace, 403 for a viewer."""
    link = (
        visible(TaskLink.objects.all(), user, workspace="dependent__workflow__workspace")
        .annotate(member_role=F("dependent__workflow__workspace__memberships__role"))
        .select_related("dependent")
        .filter(pk=link_id)
        .first()
    )
    if link is None:
        raise Http404
    check_role(link.member_role, write=True)
    return link


class LinkView(GenericAPIView):
    """One link."""

    queryset = TaskLink.objects.none()

    @extend_schema(summary="Remove a link", responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer})
    def delete(self, request, pk):
        link_delete(link=writable_link(request.user, pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
