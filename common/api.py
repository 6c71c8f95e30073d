"""Shared pieces of the REST API."""

from rest_framework import serializers, status
from rest_framework.response import Response


class ErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    detail = serializers.CharField()


class WipConflictSerializer(ErrorSerializer):
    """A full limit: `scope` says which, and the body names it."""

    scope = serializers.ChoiceField(choices=["step", "group", "person", "expedite"])
    step = serializers.DictField(required=False, help_text="scope step or group: {id, name}")
    group = serializers.DictField(required=False, help_text="scope group: {id, name}")
    assignee = serializers.DictField(required=False, help_text="scope person: {id, username}")
    limit = serializers.IntegerField()
    occupied = serializers.IntegerField()


def admission_response(admission, data: dict, *, created: bool = False) -> Response:
    """202 when the task waits in an overflow queue; else 201 for creations, 200 for the rest."""
    if admission.queued:
        return Response(data, status=status.HTTP_202_ACCEPTED)
    return Response(data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)
