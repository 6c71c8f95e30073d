from rest_framework import serializers

from teams.models import InvitationState
from teams.services import INVITE_DAYS_DEFAULT, INVITE_DAYS_MAX
from workflows.models import Role
from workflows.step_rules import MAX_WIP_LIMIT


class MemberSerializer(serializers.Serializer):
    """A member; `occupied` counts what their personal limit counts (boards.selectors.with_occupied)."""

    user_id = serializers.IntegerField(read_only=True)
    username = serializers.CharField(source="user.username", read_only=True)
    role = serializers.ChoiceField(choices=Role.choices, read_only=True)
    wip_limit = serializers.IntegerField(read_only=True, help_text="0 = no personal limit")
    occupied = serializers.IntegerField(read_only=True)


class WipLimitField(serializers.IntegerField):
    def __init__(self, **kwargs):
        super().__init__(min_value=0, max_value=MAX_WIP_LIMIT, help_text="0 = no personal limit", **kwargs)


class MemberAddSerializer(serializers.Serializer):
    username = serializers.CharField(required=False, max_length=150)
    email = serializers.EmailField(required=False, max_length=254)
    role = serializers.ChoiceField(choices=Role.choices, default=Role.MEMBER)
    wip_limit = WipLimitField(default=0)

    def validate(self, data):
        if bool(data.get("username")) == bool(data.get("email")):
            raise serializers.ValidationError({"username": ["Give a username or an e-mail address, not both."]})
        return data


class MemberUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices, required=False)
    wip_limit = WipLimitField(required=False)


class InviteCreateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices, default=Role.MEMBER)
    expires_in_days = serializers.IntegerField(min_value=1, max_value=INVITE_DAYS_MAX, default=INVITE_DAYS_DEFAULT)


class InviteSerializer(serializers.Serializer):
    """An invite as listed: its link is not recoverable (only its hash is kept)."""

    id = serializers.UUIDField(read_only=True)
    role = serializers.CharField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None, read_only=True)
    used_by = serializers.CharField(source="used_by.username", default=None, read_only=True)
    state = serializers.SerializerMethodField()

    def get_state(self, invite) -> str:
        return invite.state(self.context["now"])


class InviteCreatedSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    url = serializers.URLField()
    role = serializers.CharField()
    expires_at = serializers.DateTimeField()


class InvitationSerializer(serializers.Serializer):
    """An invitation as its owner made it: the address as given, never whose it is."""

    id = serializers.UUIDField(read_only=True)
    username = serializers.CharField(read_only=True, allow_null=True, help_text="As given, or null")
    email = serializers.CharField(read_only=True, allow_null=True, help_text="As given (lower case), or null")
    role = serializers.ChoiceField(choices=Role.choices, read_only=True)
    wip_limit = serializers.IntegerField(read_only=True, help_text="0 = no personal limit")
    state = serializers.ChoiceField(choices=InvitationState.choices, read_only=True)
    created_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, invitation):
        data = super().to_representation(invitation)
        return {**data, "username": invitation.username or None, "email": invitation.email or None}


class MyInvitationSerializer(serializers.Serializer):
    """An invitation as the invited person sees it."""

    id = serializers.UUIDField(read_only=True)
    workspace_id = serializers.UUIDField(read_only=True)
    workspace_name = serializers.CharField(source="workspace.name", read_only=True)
    role = serializers.ChoiceField(choices=Role.choices, read_only=True)
    wip_limit = serializers.IntegerField(read_only=True, help_text="0 = no personal limit")
    invited_by = serializers.CharField(source="created_by.username", default=None, read_only=True)
    state = serializers.ChoiceField(choices=InvitationState.choices, read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
