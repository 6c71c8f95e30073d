from django.urls import path

from teams import api, views

api_urlpatterns = [
    path("workspaces/<uuid:workspace_id>/members/", api.MemberListView.as_view(), name="members"),
    path("workspaces/<uuid:workspace_id>/members/<int:user_id>/", api.MemberDetailView.as_view(), name="member"),
    path("workspaces/<uuid:workspace_id>/invites/", api.InviteListView.as_view(), name="invites"),
    path(
        "workspaces/<uuid:workspace_id>/invites/<uuid:invite_id>/", api.InviteDetailView.as_view(), name="invite-detail"
    ),
]

page_urlpatterns = [
    path("invites/<str:token>/", views.invite, name="invite"),
    path("workspaces/<uuid:workspace_id>/members/", views.members, name="members-page"),
]
