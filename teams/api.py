"""Members and invite links of a workspace: /api/v1/workspaces/{id}/members/ and /invites/;
the signed-in person's invitations: /api/v1/me/invitations/.

Every member may list the members (assignee pickers need them); only owners change them
or handle invites. Adding a member by username or e-mail invites them: they join when they
accept. A member may remove themselves (leave). The last owner stays (409).
"""

from django.http import Http404
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from boards.selectors import with_occupied
from common.api import ErrorSerializer
from common.validation import validated
from teams import invitations, services
from teams.models import Invitation, Invite
from teams.serializers import (
    InvitationSerializer,
    InviteCreatedSerializer,
    InviteCreateSerializer,
    InviteSerializer,
    MemberAddSerializer,
    MemberSerializer,
    MemberUpdateSerializer,
    MyInvitationSerializer,
)
from workflows.access import require_role
from workflows.models import Membership, Workspace

ERRORS = {400: ErrorSerializer, 403: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer}


def _workspace(request, workspace_id, *, owner: bool = False) -> Workspace:
    require_role(request.user, workspace_id, owner=owner)
    return Workspace.objects.get(pk=workspace_id)


def _members(workspace):
    """The workspace's members with their occupancy, in one query."""
    memberships = Membership.objects.filter(workspace=workspace).select_related("user")
    return with_occupied(memberships).order_by("user__username", "pk")


def _member(workspace, user_id) -> Membership:
    return _members(workspace).get(user_id=user_id)


class MemberListView(APIView):
    @extend_schema(responses={200: MemberSerializer(many=True), 404: ErrorSerializer})
    def get(self, request, workspace_id):
        workspace = _workspace(request, workspace_id)
        return Response(MemberSerializer(_members(workspace), many=True).data)

    @extend_schema(
        request=MemberAddSerializer,
        responses={202: InvitationSerializer, **ERRORS},
        description="Invites the person: they join when they accept (`/api/v1/me/invitations/`). "
        "The answer is the same whether or not the username or e-mail names an account.",
    )
    def post(self, request, workspace_id):
        workspace = _workspace(request, workspace_id, owner=True)
        data = validated(MemberAddSerializer, request.data)
        invitation = invitations.invitation_create(workspace=workspace, actor=request.user, **data)
        return Response(InvitationSerializer(invitation).data, status=status.HTTP_202_ACCEPTED)


class MemberDetailView(APIView):
    @extend_schema(request=MemberUpdateSerializer, responses={200: MemberSerializer, **ERRORS})
    def patch(self, request, workspace_id, user_id):
        workspace = _workspace(request, workspace_id, owner=True)
        data = validated(MemberUpdateSerializer, request.data)
        try:
            services.member_update(workspace=workspace, user_id=user_id, actor=request.user, **data)
        except Membership.DoesNotExist:
            raise Http404 from None
        return Response(MemberSerializer(_member(workspace, user_id)).data)

    @extend_schema(responses={204: None, **ERRORS})
    def delete(self, request, workspace_id, user_id):
        leaving = user_id == request.user.pk
        workspace = _workspace(request, workspace_id, owner=not leaving)
        try:
            services.member_remove(workspace=workspace, user_id=user_id, actor=request.user)
        except Membership.DoesNotExist:
            raise Http404 from None
        return Response(status=status.HTTP_204_NO_CONTENT)


class InviteListView(APIView):
    @extend_schema(responses={200: InviteSerializer(many=True), 403: ErrorSerializer, 404: ErrorSerializer})
    def get(self, request, workspace_id):
        workspace = _workspace(request, workspace_id, owner=True)
        invites = Invite.objects.filter(workspace=workspace).select_related("created_by", "used_by")
        return Response(InviteSerializer(invites, many=True, context={"now": timezone.now()}).data)

    @extend_schema(request=InviteCreateSerializer, responses={201: InviteCreatedSerializer, **ERRORS})
    def post(self, request, workspace_id):
        workspace = _workspace(request, workspace_id, owner=True)
        data = validated(InviteCreateSerializer, request.data)
        invite, token = services.invite_create(workspace=workspace, actor=request.user, **data)
        url = request.build_absolute_uri(reverse("invite", kwargs={"token": token}))
        body = {"id": invite.pk, "url": url, "role": invite.role, "expires_at": invite.expires_at}
        return Response(InviteCreatedSerializer(body).data, status=status.HTTP_201_CREATED)


class InviteDetailView(APIView):
    @extend_schema(responses={204: None, 403: ErrorSerializer, 404: ErrorSerializer})
    def delete(self, request, workspace_id, invite_id):
        workspace = _workspace(request, workspace_id, owner=True)
        invite = Invite.objects.filter(workspace=workspace, pk=invite_id).first()
        if invite is None:
            raise Http404
        services.invite_revoke(invite=invite)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MyInvitationListView(APIView):
    @extend_schema(responses={200: MyInvitationSerializer(many=True)})
    def get(self, request):
        return Response(MyInvitationSerializer(invitations.invitations_for(request.user), many=True).data)


class MyInvitationAnswerView(APIView):
    """Accept or decline one's own invitation; anyone else's is not found."""

    answer = None

    @extend_schema(request=None, responses={200: MyInvitationSerializer, 404: ErrorSerializer, 409: ErrorSerializer})
    def post(self, request, invitation_id):
        try:
            invitation = self.answer(invitation_id=invitation_id, user=request.user)
        except Invitation.DoesNotExist:
            raise Http404 from None
        return Response(MyInvitationSerializer(invitation).data)
