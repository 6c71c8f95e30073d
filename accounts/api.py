"""API tokens of the signed-in user: list, create (the key is shown once), revoke."""

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle

from accounts.models import ApiToken
from accounts.signals import token_revoked
from common.api import ErrorSerializer
from common.text import clean_text


class ApiTokenSerializer(serializers.ModelSerializer):
    """A token as listed: never its key (only its SHA-256 is stored) nor that hash."""

    name = serializers.CharField(max_length=100, required=False, allow_blank=True, default="")
    workspace_id = serializers.UUIDField(
        read_only=True, allow_null=True, help_text="Set for a runner's workspace-scoped token."
    )

    class Meta:
        model = ApiToken
        fields = ["id", "name", "prefix", "workspace_id", "created_at", "last_used_at", "revoked_at"]
        read_only_fields = ["id", "prefix", "created_at", "last_used_at", "revoked_at"]

    def validate_name(self, value):
        return clean_text(value)


class IssuedTokenSerializer(ApiTokenSerializer):
    key = serializers.CharField(read_only=True, help_text="Shown once; store it now.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "key"]


class TokenCreateThrottle(UserRateThrottle):
    """A stolen session cannot mint keys in bulk (KANDEV_TOKEN_CREATE_RATE, e.g. "10/hour")."""

    scope = "token_create"

    def get_rate(self):
        return settings.KANDEV_TOKEN_CREATE_RATE


class ApiTokenViewSet(
    mixins.ListModelMixin,
    mixins.CreateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = ApiTokenSerializer
    queryset = ApiToken.objects.none()  # the model, for the schema; rows come from get_queryset

    def get_queryset(self):
        return ApiToken.objects.filter(user=self.request.user).order_by("-created_at", "-id")

    def get_throttles(self):
        return [TokenCreateThrottle()] if self.action == "create" else super().get_throttles()

    @extend_schema(
        request=ApiTokenSerializer,
        responses={201: IssuedTokenSerializer, 400: ErrorSerializer, 429: ErrorSerializer},
    )
    def create(self, request):
        serializer = ApiTokenSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        token, key = ApiToken.issue(user=request.user, name=serializer.validated_data["name"])
        body = {**ApiTokenSerializer(token).data, "key": key}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(responses={204: None, 404: ErrorSerializer})
    def destroy(self, request, pk=None):
        """Revoke: the key stops working at once; the row stays for the audit trail."""
        token = self.get_object()
        if token.revoked_at is None:
            ApiToken.objects.filter(pk=token.pk).update(revoked_at=timezone.now())
            token_revoked.send(sender=ApiToken, user_id=token.user_id)  # its open sockets close (§7b)
        return Response(status=status.HTTP_204_NO_CONTENT)
