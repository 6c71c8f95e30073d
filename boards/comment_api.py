"""The comments of a task: `GET/POST /api/v1/tasks/{id}/comments/`, `PATCH/DELETE
/api/v1/comments/{id}/`. Viewers read; members and owners comment; the rest is
boards/comments.py's rule (its author edits a comment, its author or an owner deletes it)."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from boards.comments import comment_create, comment_data, comment_delete, comment_edit, comments_of
from boards.models import COMMENT_BODY_MAX, Comment, Task
from common.api import ErrorSerializer
from common.text import clean_text
from common.validation import validated
from workflows import access


class CommentBodySerializer(serializers.Serializer):
    body = serializers.CharField(max_length=COMMENT_BODY_MAX, help_text="Markdown")

    def validate_body(self, value):
        return clean_text(value, multiline=True)


class CommentSerializer(serializers.Serializer):
    """Output shape of a comment (boards.comments.comment_data)."""

    id = serializers.UUIDField(read_only=True)
    task_id = serializers.UUIDField(read_only=True)
    author = serializers.CharField(read_only=True, allow_null=True, help_text="username")
    body = serializers.CharField(read_only=True, help_text="Markdown, as written")
    created_at = serializers.DateTimeField(read_only=True)
    edited_at = serializers.DateTimeField(read_only=True, allow_null=True)
    mentions = serializers.ListField(child=serializers.CharField(), read_only=True, help_text="usernames")


class TaskCommentsView(GenericAPIView):
    serializer_class = CommentSerializer
    queryset = Comment.objects.none()  # the model, for the schema

    @extend_schema(summary="List a task's comments (oldest first)", responses=CommentSerializer(many=True))
    def get(self, request, task_id):
        task = access.member_object(Task, request.user, task_id)
        if task is None:
            raise Http404
        page = self.paginate_queryset(comments_of(task))
        return self.get_paginated_response([comment_data(c, c.mentions.all()) for c in page])

    @extend_schema(
        summary="Comment on a task",
        request=CommentBodySerializer,
        responses={201: CommentSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def post(self, request, task_id):
        task = access.writable(Task, request.user, task_id)
        data = validated(CommentBodySerializer, request.data)
        return Response(comment_create(task=task, author=request.user, body=data["body"]), status.HTTP_201_CREATED)


class CommentView(GenericAPIView):
    serializer_class = CommentSerializer
    queryset = Comment.objects.none()

    @extend_schema(
        summary="Edit a comment (its author)",
        request=CommentBodySerializer,
        responses={200: CommentSerializer, 400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def patch(self, request, pk):
        comment = access.writable(Comment, request.user, pk)
        data = validated(CommentBodySerializer, request.data)
        return Response(comment_edit(comment=comment, actor=request.user, body=data["body"]))

    @extend_schema(
        summary="Delete a comment (its author or an owner)",
        responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer},
    )
    def delete(self, request, pk):
        comment_delete(comment=access.writable(Comment, request.user, pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
