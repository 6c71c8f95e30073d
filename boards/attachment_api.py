"""Task attachments over REST: a task's list and uploads, an attachment's download and delete.
Viewers list and download; owners and members upload; the uploader or an owner deletes."""

from django.db.models import F
from django.http import FileResponse, Http404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import generics, mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response

from boards.attachments import attachment_add, attachment_delete
from boards.models import Attachment, Task
from boards.uploads import BoundedUpload
from common.api import ErrorSerializer
from common.errors import Invalid
from workflows import access
from workflows.access import visible

UPLOAD = {
    "multipart/form-data": {
        "type": "object",
        "properties": {"file": {"type": "string", "format": "binary"}},
        "required": ["file"],
    }
}


class AttachmentSerializer(serializers.ModelSerializer):
    task_id = serializers.UUIDField(read_only=True)
    uploaded_by = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="Where to download it (always as an attachment)")

    class Meta:
        model = Attachment
        fields = ["id", "task_id", "name", "size", "content_type", "uploaded_by", "created_at", "url"]

    def get_uploaded_by(self, attachment) -> str | None:
        return attachment.uploaded_by.username if attachment.uploaded_by_id else None

    def get_url(self, attachment) -> str:
        return reverse("attachment-download", args=[attachment.pk])


class TaskAttachmentsView(generics.GenericAPIView):
    """GET/POST /api/v1/tasks/{id}/attachments/."""

    serializer_class = AttachmentSerializer
    parser_classes = [MultiPartParser]
    queryset = Attachment.objects.none()  # the model, for the schema

    def initial(self, request, *args, **kwargs):
        # Before anything reads the body (the session's CSRF check reads the form): an
        # upload past the bound stops being read there and then.
        request._request.upload_handlers = [BoundedUpload(request._request), *request._request.upload_handlers]
        super().initial(request, *args, **kwargs)

    @extend_schema(
        summary="List a task's attachments",
        responses={200: AttachmentSerializer(many=True), 404: ErrorSerializer},
    )
    def get(self, request, task_id):
        task = visible(Task.objects.filter(pk=task_id), request.user).first()
        if task is None:
            raise Http404
        attachments = Attachment.objects.filter(task=task).select_related("uploaded_by")
        page = self.paginate_queryset(attachments)
        return self.get_paginated_response(AttachmentSerializer(page, many=True).data)

    @extend_schema(
        summary="Attach a file to a task",
        request=UPLOAD,
        responses={
            201: AttachmentSerializer,
            400: ErrorSerializer,
            403: ErrorSerializer,
            404: ErrorSerializer,
            409: OpenApiResponse(ErrorSerializer, description="The task has as many attachments as it may"),
            413: OpenApiResponse(ErrorSerializer, description="The file is larger than KANDEV_MAX_ATTACHMENT_BYTES"),
        },
    )
    def post(self, request, task_id):
        task = access.writable(Task, request.user, task_id)
        upload = request.FILES.get("file")
        if upload is None:
            raise Invalid({"file": ["Choose a file to attach."]})
        if not upload.size:
            raise Invalid({"file": ["The file is empty."]})
        attachment = attachment_add(task=task, actor=request.user, upload=upload)
        return Response(AttachmentSerializer(attachment).data, status=status.HTTP_201_CREATED)


class AnyAccept(DefaultContentNegotiation):
    """A download answers the file whatever the client accepts (errors stay JSON)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class AttachmentViewSet(mixins.DestroyModelMixin, viewsets.GenericViewSet):
    """DELETE /api/v1/attachments/{id}/ and GET /api/v1/attachments/{id}/download/."""

    serializer_class = AttachmentSerializer
    queryset = Attachment.objects.none()

    def get_queryset(self):
        return (
            visible(Attachment.objects.all(), self.request.user, "task__workflow__workspace")
            .annotate(member_role=F("task__workflow__workspace__memberships__role"))
            .select_related("task")
        )

    @extend_schema(summary="Delete an attachment", responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer})
    def destroy(self, request, pk=None):
        attachment = self.get_object()
        role = access.check_role(attachment.member_role, write=True)
        attachment_delete(attachment=attachment, actor=request.user, role=role)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Download an attachment",
        responses={(200, "*/*"): OpenApiTypes.BINARY, 404: ErrorSerializer},
    )
    @action(detail=True, methods=["get"], content_negotiation_class=AnyAccept)
    def download(self, request, pk=None):
        """The file, always as a download (`Content-Disposition: attachment`, the name encoded
        as RFC 6266 says), never sniffed into something a browser would run."""
        attachment = self.get_object()
        try:
            file = attachment.file.open("rb")
        except FileNotFoundError:  # lost by the storage: say so rather than fail
            raise NotFound("This file is missing from the storage.") from None
        response = FileResponse(
            file,
            as_attachment=True,
            filename=attachment.name,
            content_type=attachment.content_type,
        )
        response["X-Content-Type-Options"] = "nosniff"
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "private, no-cache"
        return response
