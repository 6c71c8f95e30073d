"""The signed-in person's own account: `GET/PATCH /api/v1/me/` (profile, e-mail, time zone,
notification choices) and their API tokens: list, create (the key is shown once), revoke."""

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import generics, mixins, serializers, status, viewsets
from rest_framework.response import Response
from rest_framework.throttling import UserRateThrottle

from accounts import profiles
from accounts.models import NOTIFY_KINDS, ApiToken, Notify, Theme
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
        self.get_object().revoke()
        return Response(status=status.HTTP_204_NO_CONTENT)


class MeSerializer(serializers.Serializer):
    """The person's account. `notify` maps each kind of news to where they hear of it; a
    PATCH may name some kinds only, the others keep their choice."""

    username = serializers.CharField(read_only=True, help_text="Changed by an administrator only.")
    name = serializers.CharField(max_length=150, required=False, allow_blank=True)
    email = serializers.EmailField(
        max_length=254, required=False, allow_null=True, help_text="null when the account has none; null clears it."
    )
    time_zone = serializers.ChoiceField(choices=(), required=False, help_text="An IANA time zone, e.g. Europe/Paris.")
    theme = serializers.ChoiceField(choices=Theme.choices, required=False)
    notify = serializers.DictField(
        child=serializers.ChoiceField(choices=Notify.choices),
        required=False,
        help_text=f"Kinds: {', '.join(NOTIFY_KINDS)}; each one of {', '.join(Notify.values)}.",
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["time_zone"].choices = profiles.time_zones()  # read once the app is up

    def to_representation(self, user):
        profile = profiles.profile_of(user)
        return {
            "username": user.get_username(),
            "name": profile.name,
            "email": user.email or None,
            "time_zone": profile.time_zone,
            "theme": profile.theme,
            "notify": profile.notify_choices(),
        }

    def validate_name(self, value):
        return clean_text(value)

    def validate_email(self, value):
        if value is None:
            return ""
        if profiles.email_in_use(value, besides=self.instance):
            raise serializers.ValidationError("Another account already uses this e-mail address.")
        return value

    def to_internal_value(self, data):
        notify = data.get("notify") if isinstance(data, dict) else None
        if notify is not None and (errors := profiles.notify_errors(notify)):
            raise serializers.ValidationError({"notify": errors})
        return super().to_internal_value(data)

    def update(self, user, validated_data):
        profiles.profile_update(user, **validated_data)
        return user


class MeView(generics.RetrieveUpdateAPIView):
    serializer_class = MeSerializer
    http_method_names = ["get", "patch", "head", "options"]

    def get_object(self):
        return self.request.user

    @extend_schema(responses={200: MeSerializer, 400: ErrorSerializer})
    def patch(self, request, *args, **kwargs):
        return self.partial_update(request, *args, **kwargs)
