import django_filters
from django.db.models import F, Q
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from boards import admission
from boards.card_serializers import DUE_HELP, parse_due
from boards.messages import task_data
from boards.models import ClassOfService, EventKind, Priority, Task, TaskEvent
from boards.outlook import task_outlook
from boards.serializers import (
    PRIORITY_CHOICES,
    BlockSerializer,
    BulkMoveSerializer,
    RestoreSerializer,
    TaskCreateSerializer,
    TaskDetailSerializer,
    TaskEventSerializer,
    TaskMoveSerializer,
    TaskSerializer,
    TaskUpdateSerializer,
)
from boards.services import task_block, task_unblock, task_update
from boards.waiting import task_waiting
from boards.watching import watching
from common.api import ErrorSerializer, WipConflictSerializer, admission_response
from common.db import one_read
from common.errors import Invalid
from common.validation import validated, whole_number
from workflows import access
from workflows.access import check_role, visible

ADMISSION_RESPONSES = {
    202: TaskSerializer,
    400: ErrorSerializer,
    403: ErrorSerializer,
    404: ErrorSerializer,
    409: OpenApiResponse(WipConflictSerializer, description="WIP limit reached"),
}


# true or false, and nothing else: a yes/no filter that does not know a value refuses it
# rather than ignoring it (django-filter's BooleanFilter reads "maybe" as no filter at all).
BOOLEAN = [("true", "true"), ("false", "false")]


class TaskFilter(django_filters.FilterSet):
    workflow = django_filters.UUIDFilter(field_name="workflow_id")
    step = django_filters.UUIDFilter(field_name="step_id")
    lane = django_filters.UUIDFilter(field_name="lane_id")
    priority = django_filters.ChoiceFilter(choices=[(p, p) for p in PRIORITY_CHOICES], method="filter_priority")
    archived = django_filters.ChoiceFilter(choices=BOOLEAN, method="filter_archived")
    q = django_filters.CharFilter(method="filter_q")
    # The board's filter bar, field by field (static/board/filter.js): blocked (with a reason or
    # by a dependency) or not, one person's tasks or nobody's (`none`), one class of service.
    blocked = django_filters.ChoiceFilter(choices=BOOLEAN, method="filter_blocked")
    assignee = django_filters.CharFilter(method="filter_assignee")
    class_of_service = django_filters.ChoiceFilter(choices=ClassOfService.choices)
    label = django_filters.UUIDFilter(field_name="labels")
    # A date (midnight UTC) or a moment: due before it (not at it), due at or after it.
    due_before = django_filters.CharFilter(method="filter_due")
    due_after = django_filters.CharFilter(method="filter_due")
    sort = django_filters.ChoiceFilter(
        choices=[("due", "due")], method="filter_sort", help_text="due: soonest due first"
    )

    class Meta:
        model = Task
        fields = []

    def filter_priority(self, queryset, name, value):
        return queryset.filter(priority=Priority.from_name(value))

    def filter_archived(self, queryset, name, value):
        return queryset.filter(archived_at__isnull=value == "false")

    def filter_q(self, queryset, name, value):
        return queryset.filter(Q(title__icontains=value) | Q(external_ref__icontains=value))

    def filter_blocked(self, queryset, name, value):
        """Blocked with a reason, or by an unfinished blocker (a dependency)."""
        blocked = ~Q(blocked_reason="") | ~Q(blocked_by=[])
        return queryset.filter(blocked) if value == "true" else queryset.exclude(blocked)

    def filter_assignee(self, queryset, name, value):
        if value == "none":
            return queryset.filter(assignee__isnull=True)
        user_id = whole_number(value)  # str.isdigit() also takes "¹", which int() refuses
        if user_id is None:
            raise Invalid({"assignee": ["A user id, or none."]})
        return queryset.filter(assignee_id=user_id)

    def filter_due(self, queryset, name, value):
        try:
            moment, _ = parse_due(value)
        except ValueError:
            raise Invalid({name: [DUE_HELP]}) from None
        return queryset.filter(due_at__lt=moment) if name == "due_before" else queryset.filter(due_at__gte=moment)

    def filter_sort(self, queryset, name, value):
        return queryset.order_by(F("due_at").asc(nulls_last=True), "created_at", "id")


@extend_schema_view(
    list=extend_schema(responses=TaskSerializer(many=True)),
    retrieve=extend_schema(responses=TaskDetailSerializer),
    destroy=extend_schema(responses={204: None, 404: ErrorSerializer}),
)
class TaskViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet):
    serializer_class = TaskSerializer
    filterset_class = TaskFilter
    queryset = Task.objects.none()  # the model, for the schema; rows come from get_queryset

    def get_queryset(self):
        return (
            visible(Task.objects.all(), self.request.user)
            .annotate(member_role=F("workflow__workspace__memberships__role"))
            .select_related("workflow")
            .order_by("workflow_id", "step_id", "position", "priority", "created_at", "id")
        )

    def retrieve(self, request, pk=None):
        """The task detail: the task, why it waits (`waiting`) and its outlook (`forecast`,
        `sle`), all from one state of the board: read apart, the task can be in a step
        deleted since; and whether you watch it (`watching`: yours alone, never in the shared
        board read)."""
        with one_read():
            task = self.get_object()
            waiting = task_waiting(task)
            return Response(
                {
                    **task_data(task),
                    "waiting": waiting,
                    **task_outlook(task, waiting),
                    "watching": watching(request.user, task),
                }
            )

    def writable_task(self) -> Task:
        """The task of the URL for a write: 404 unless the user is a member, 403 for a viewer."""
        return access.writable(Task, self.request.user, self.kwargs["pk"])

    @extend_schema(request=TaskCreateSerializer, responses={201: TaskSerializer, **ADMISSION_RESPONSES})
    def create(self, request):
        data = self.validated(TaskCreateSerializer, user=request.user)
        result = admission.task_create(
            workflow=data["workflow"],
            actor=request.user,
            step=data["step"],
            title=data["title"],
            description=data["description"],
            priority=data.get("priority", Priority.MEDIUM),
            position=data.get("position"),
            is_ephemeral=data["is_ephemeral"],
            external_ref=data.get("external_ref"),
            assignee_id=data.get("assignee_id"),
            class_of_service=data["class_of_service"],
            force=data["force"],
            reason=data["reason"],
            lane_id=data.get("lane_id"),
        )
        return admission_response(result, task_data(result.task), created=True)

    @extend_schema(
        request=TaskUpdateSerializer,
        responses={200: TaskSerializer, 400: ErrorSerializer, 409: WipConflictSerializer},
    )
    def partial_update(self, request, pk=None):
        task = self.writable_task()
        data = self.validated(TaskUpdateSerializer, workspace_id=task.workflow.workspace_id)
        if data:
            task = task_update(task=task, actor=request.user, **data)
        return Response(task_data(task))

    def perform_destroy(self, task):
        check_role(task.member_role, write=True)
        admission.task_delete(task=task, actor=self.request.user)

    @extend_schema(request=TaskMoveSerializer, responses={200: TaskSerializer, **ADMISSION_RESPONSES})
    @action(detail=True, methods=["post"])
    def move(self, request, pk=None):
        task = self.writable_task()
        data = self.validated(TaskMoveSerializer)
        result = admission.task_move(
            task=task,
            to_step=data["step_id"],
            actor=request.user,
            position=data.get("position"),
            force=data["force"],
            reason=data["reason"],
            lane_id=data.get("lane_id"),
        )
        return admission_response(result, task_data(result.task))

    @extend_schema(
        request=BulkMoveSerializer,
        responses={200: TaskSerializer(many=True), 400: ErrorSerializer, 409: WipConflictSerializer},
    )
    @action(detail=False, methods=["post"], url_path="bulk-move")
    def bulk_move(self, request):
        data = self.validated(BulkMoveSerializer)
        step = access.member_step(request.user, data["step_id"])
        check_role(step.member_role, write=True)
        results = admission.task_bulk_move(task_ids=data["task_ids"], to_step=step, actor=request.user)
        return Response([task_data(r.task) for r in results])

    @extend_schema(request=None, responses={200: TaskSerializer, 404: ErrorSerializer})
    @action(detail=True, methods=["post"])
    def archive(self, request, pk=None):
        task = admission.task_archive(task=self.writable_task(), actor=request.user)
        return Response(task_data(task))

    @extend_schema(request=RestoreSerializer, responses={200: TaskSerializer, **ADMISSION_RESPONSES})
    @action(detail=True, methods=["post"])
    def restore(self, request, pk=None):
        task = self.writable_task()
        data = self.validated(RestoreSerializer)
        result = admission.task_restore(task=task, actor=request.user, force=data["force"], reason=data["reason"])
        return admission_response(result, task_data(result.task))

    @extend_schema(request=RestoreSerializer, responses={200: TaskSerializer, **ADMISSION_RESPONSES})
    @action(detail=True, methods=["post"], url_path="make-permanent")
    def make_permanent(self, request, pk=None):
        task = self.writable_task()
        data = self.validated(RestoreSerializer)
        result = admission.task_make_permanent(
            task=task, actor=request.user, force=data["force"], reason=data["reason"]
        )
        return admission_response(result, task_data(result.task))

    @extend_schema(
        request=BlockSerializer,
        responses={200: TaskSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["post"])
    def block(self, request, pk=None):
        task = self.writable_task()
        data = self.validated(BlockSerializer)
        blocked = task_block(
            task=task, actor=request.user, reason=data["reason"], blocked_type_id=data.get("blocked_type_id")
        )
        return Response(task_data(blocked))

    @extend_schema(request=None, responses={200: TaskSerializer, 403: ErrorSerializer, 404: ErrorSerializer})
    @action(detail=True, methods=["post"])
    def unblock(self, request, pk=None):
        return Response(task_data(task_unblock(task=self.writable_task(), actor=request.user)))

    @extend_schema(responses=TaskEventSerializer(many=True))
    @action(detail=True, methods=["get"], filterset_class=None)
    def events(self, request, pk=None):
        task = self.get_object()
        events = TaskEvent.objects.filter(task_id=task.pk, workflow_id=task.workflow_id).select_related("actor")
        page = self.paginate_queryset(events)
        return self.get_paginated_response(TaskEventSerializer(page, many=True).data)

    def validated(self, serializer_class, **context) -> dict:
        return validated(serializer_class, self.request.data, context=context)


class WorkflowEventFilter(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=EventKind.choices)
    task = django_filters.UUIDFilter(field_name="task_id")
    step = django_filters.UUIDFilter(method="filter_step")
    since = django_filters.IsoDateTimeFilter(field_name="at", lookup_expr="gte")
    until = django_filters.IsoDateTimeFilter(field_name="at", lookup_expr="lt")

    class Meta:
        model = TaskEvent
        fields = []

    def filter_step(self, queryset, name, value):
        return queryset.filter(Q(from_step_id=value) | Q(to_step_id=value))
