"""The REST doors to a card's labels, blocker types and checklist (boards/labels.py,
boards/blocker_types.py, boards/checklists.py)."""

from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, status, viewsets
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from boards import blocker_types, checklists, labels
from boards.blocker_types import blocker_type_data
from boards.card_serializers import (
    BlockerTypeRenameSerializer,
    BlockerTypeSerializer,
    ChecklistItemSerializer,
    ChecklistItemUpdateSerializer,
    LabelSerializer,
    LabelUpdateSerializer,
    item_data,
)
from boards.messages import label_data
from boards.models import BlockerType, ChecklistItem, Label, Task
from common.api import ErrorSerializer
from common.validation import parse_uuid, validated
from workflows import access
from workflows.access import require_role, visible


class WorkspaceListViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """A workspace's list of named things (its labels, its blocker types): members see them,
    `?workspace=` narrows the list, and `write_role` says who changes them."""

    list_params = ("workspace",)  # read by get_queryset
    write_role: dict = {"write": True}  # require_role's keyword

    def get_queryset(self):
        queryset = visible(self.queryset.model.objects.all(), self.request.user, "workspace")
        workspace = self.request.query_params.get("workspace")
        if self.action == "list" and workspace:
            queryset = queryset.filter(workspace_id=parse_uuid(workspace, "workspace"))
        return queryset.order_by("workspace_id", "name", "id")

    def _writable(self, pk):
        row = access.member_row(self.queryset.model.objects.all(), self.request.user, pk)
        require_role(self.request.user, row.workspace_id, **self.write_role)
        return row


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("workspace", str, description="Workspace id")],
        responses=LabelSerializer(many=True),
    ),
    retrieve=extend_schema(responses={200: LabelSerializer, 404: ErrorSerializer}),
)
class LabelViewSet(WorkspaceListViewSet):
    """A workspace's labels: members and owners change them, viewers read them."""

    serializer_class = LabelSerializer
    queryset = Label.objects.none()  # the model, for the schema; rows come from get_queryset

    @extend_schema(
        request=LabelSerializer, responses={201: LabelSerializer, 400: ErrorSerializer, 409: ErrorSerializer}
    )
    def create(self, request):
        data = validated(LabelSerializer, request.data)
        workspace = access.member_workspace(request.user, data["workspace_id"], write=True)
        label = labels.label_create(
            workspace_id=workspace.pk, actor=request.user, name=data["name"], color=data["color"]
        )
        return Response(label_data(label), status=status.HTTP_201_CREATED)

    @extend_schema(request=LabelUpdateSerializer, responses={200: LabelSerializer, 400: ErrorSerializer})
    def partial_update(self, request, pk=None):
        label = self._writable(pk)
        data = validated(LabelUpdateSerializer, request.data)
        if data:
            label = labels.label_update(label=label, actor=request.user, **data)
        return Response(label_data(label))

    @extend_schema(responses={204: None, 404: ErrorSerializer})
    def destroy(self, request, pk=None):
        labels.label_delete(label=self._writable(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(
        parameters=[OpenApiParameter("workspace", str, description="Workspace id")],
        responses=BlockerTypeSerializer(many=True),
    ),
    retrieve=extend_schema(responses={200: BlockerTypeSerializer, 404: ErrorSerializer}),
)
class BlockerTypeViewSet(WorkspaceListViewSet):
    """A workspace's blocker types: every member reads them, owners keep the list."""

    serializer_class = BlockerTypeSerializer
    queryset = BlockerType.objects.none()  # the model, for the schema; rows come from get_queryset
    write_role = {"owner": True}

    @extend_schema(
        request=BlockerTypeSerializer,
        responses={201: BlockerTypeSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 409: ErrorSerializer},
    )
    def create(self, request):
        data = validated(BlockerTypeSerializer, request.data)
        workspace = access.member_workspace(request.user, data["workspace_id"], owner=True)
        made = blocker_types.blocker_type_create(workspace_id=workspace.pk, actor=request.user, name=data["name"])
        return Response(blocker_type_data(made), status=status.HTTP_201_CREATED)

    @extend_schema(
        request=BlockerTypeRenameSerializer,
        responses={200: BlockerTypeSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def partial_update(self, request, pk=None):
        blocker_type = self._writable(pk)
        data = validated(BlockerTypeRenameSerializer, request.data)
        renamed = blocker_types.blocker_type_rename(blocker_type=blocker_type, actor=request.user, name=data["name"])
        return Response(blocker_type_data(renamed))

    @extend_schema(responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer})
    def destroy(self, request, pk=None):
        blocker_types.blocker_type_delete(blocker_type=self._writable(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class TaskChecklistView(GenericAPIView):
    """GET/POST /api/v1/tasks/{id}/checklist/: a task's checklist items, in order."""

    serializer_class = ChecklistItemSerializer
    queryset = ChecklistItem.objects.none()  # the model, for the schema

    @extend_schema(responses=ChecklistItemSerializer(many=True))
    def get(self, request, task_id):
        task = access.member_object(Task, request.user, task_id)
        if task is None:
            raise Http404
        page = self.paginate_queryset(ChecklistItem.objects.filter(task_id=task.pk))
        return self.get_paginated_response([item_data(item) for item in page])

    @extend_schema(
        request=ChecklistItemSerializer,
        responses={201: ChecklistItemSerializer, 400: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request, task_id):
        task = access.writable(Task, request.user, task_id)
        data = validated(ChecklistItemSerializer, request.data)
        item = checklists.checklist_add(task=task, actor=request.user, text=data["text"])
        return Response(item_data(item), status=status.HTTP_201_CREATED)


class ChecklistItemViewSet(viewsets.GenericViewSet):
    """PATCH/DELETE /api/v1/checklist-items/{id}/: tick, edit, reorder or delete an item."""

    serializer_class = ChecklistItemSerializer
    queryset = ChecklistItem.objects.none()  # the model, for the schema

    @extend_schema(
        request=ChecklistItemUpdateSerializer, responses={200: ChecklistItemSerializer, 400: ErrorSerializer}
    )
    def partial_update(self, request, pk=None):
        item = self._writable(pk)
        data = dict(validated(ChecklistItemUpdateSerializer, request.data))
        item = checklists.checklist_update(item=item, actor=request.user, **data)
        return Response(item_data(item))

    @extend_schema(responses={204: None, 404: ErrorSerializer})
    def destroy(self, request, pk=None):
        checklists.checklist_delete(item=self._writable(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _writable(self, pk) -> ChecklistItem:
        return checklists.writable_item(self.request.user, pk)
