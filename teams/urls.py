from django.urls import path

from teams import api, invitations, views

api_urlpatterns = [
    path("workspaces/<uuid:workspace_id>/members/", api.MemberListView.as_view(), name="members"),
    path("workspaces/<uuid:workspace_id>/members/<int:user_id>/", api.MemberDetailView.as_view(), name="member"),
    path("workspaces/<uuid:workspace_id>/invites/", api.InviteListView.as_view(), name="invites"),
    path(
        "workspaces/<uuid:workspace_id>/invites/<uuid:invite_id>/", api.InviteDetailView.as_view(), name="invite-detail"
    ),
    path("me/invitations/", api.MyInvitationListView.as_view(), name="my-invitations"),
    path(
        "me/invitations/<uuid:invitation_id>/accept/",
        api.MyInvitationAnswerView.as_view(answer=invitations.invitation_accept),
        name="my-invitation-accept",
    ),
    path(
        "me/invitations/<uuid:invitation_id>/decline/",
        api.MyInvitationAnswerView.as_view(answer=invitations.invitation_decline),
        name="my-invitation-decline",
    ),
]

page_urlpatterns = [
    path("invites/accept/", views.invite, name="invite-accept"),  # before the link: "accept" is no token
    path("invites/<str:token>/", views.invite_link, name="invite"),
    path("workspaces/<uuid:workspace_id>/members/", views.members, name="members-page"),
]
