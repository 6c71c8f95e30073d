"""Authority ends with the role: a person who stops being an owner can no
longer hand out the workspace through invite links they made while they were one."""

import re
from importlib import import_module

import pytest
from django.apps import apps
from django.utils import timezone

from common.errors import Conflict
from teams import services
from teams.models import Invite
from tests.clients import api_for, browser_for
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    """Two owners, Olivia and Oscar, of one workspace."""
    workspace = WorkspaceFactory(name="Platform")
    olivia = MembershipFactory(workspace=workspace, user=UserFactory(username="olivia"), role=Role.OWNER).user
    oscar = MembershipFactory(workspace=workspace, user=UserFactory(username="oscar"), role=Role.OWNER).user
    return workspace, olivia, oscar


def member_url(workspace, user):
    return f"/api/v1/workspaces/{workspace.pk}/members/{user.pk}/"


def owner_link(workspace, creator, role="owner") -> str:
    response = api_for(creator).post(f"/api/v1/workspaces/{workspace.pk}/invites/", {"role": role}, format="json")
    assert response.status_code == 201, response.content
    return re.sub(r"^https?://[^/]+", "", response.json()["url"])


def accept_as(user, link: str):
    """Open the link as a browser does (its token moves into the session), then join."""
    browser = browser_for(user)
    assert browser.get(link).status_code == 302
    return browser.post("/invites/accept/")


def state_of(invite) -> str:
    return invite.state(timezone.now())


def roles(workspace) -> dict:
    return dict(Membership.objects.filter(workspace=workspace).values_list("user__username", "role"))


def test_a_removed_owner_cannot_take_the_workspace_back_through_their_own_link(team):
    workspace, olivia, oscar = team
    link = owner_link(workspace, olivia)
    assert api_for(oscar).delete(member_url(workspace, olivia)).status_code == 204
    refused = accept_as(olivia, link)
    assert refused.status_code == 410
    assert "has been revoked" in refused.content.decode()
    assert roles(workspace) == {"oscar": "owner"}
    assert state_of(Invite.objects.get()) == "revoked"


def test_a_demoted_owner_cannot_leave_and_rejoin_as_owner_through_their_old_link(team):
    workspace, olivia, oscar = team
    link = owner_link(workspace, olivia)
    assert api_for(oscar).patch(member_url(workspace, olivia), {"role": "member"}, format="json").status_code == 200
    assert api_for(olivia).delete(member_url(workspace, olivia)).status_code == 204  # she leaves
    assert accept_as(olivia, link).status_code == 410
    assert roles(workspace) == {"oscar": "owner"}


def test_an_owner_who_leaves_revokes_every_open_link_they_made(team):
    workspace, olivia, oscar = team
    owner_link(workspace, olivia, role="member")
    owner_link(workspace, olivia, role="viewer")
    kept = owner_link(workspace, oscar, role="viewer")
    assert api_for(olivia).delete(member_url(workspace, olivia)).status_code == 204
    listed = api_for(oscar).get(f"/api/v1/workspaces/{workspace.pk}/invites/").json()
    assert sorted((i["created_by"], i["state"]) for i in listed) == [
        ("olivia", "revoked"),
        ("olivia", "revoked"),
        ("oscar", "open"),
    ]
    assert accept_as(UserFactory(username="vic"), kept).status_code == 302


def test_a_link_whose_creator_was_demoted_since_is_refused(team):
    workspace, olivia, oscar = team
    link = owner_link(workspace, olivia, role="member")
    api_for(oscar).patch(member_url(workspace, olivia), {"role": "member"}, format="json")
    refused = accept_as(UserFactory(username="eve"), link)
    assert refused.status_code == 410
    assert "eve" not in roles(workspace)


def test_accepting_re_checks_the_creator_even_when_the_role_changed_behind_the_services(team):
    """The admin's membership inline (or any ORM write) changes roles without the service:
    the link is still refused, with its own code, and nothing changes."""
    workspace, olivia, _ = team
    _, token = services.invite_create(workspace=workspace, role=Role.OWNER, actor=olivia)
    Membership.objects.filter(workspace=workspace, user=olivia).update(role=Role.MEMBER)
    mallory = UserFactory(username="mallory")
    with pytest.raises(Conflict) as refused:
        services.invite_accept(token=token, user=mallory)
    assert refused.value.code == "invite_creator_lost_authority"
    assert refused.value.status_code == 409
    assert "mallory" not in roles(workspace)
    page = browser_for(mallory).get(f"/invites/{token}/", follow=True)
    assert page.status_code == 410
    assert "may no longer grant" in page.content.decode()
    assert "Join Platform</button>" not in page.content.decode()


def test_a_deactivated_creators_link_is_refused(team):
    workspace, olivia, _ = team
    _, token = services.invite_create(workspace=workspace, role=Role.MEMBER, actor=olivia)
    olivia.is_active = False
    olivia.save()
    with pytest.raises(Conflict):
        services.invite_accept(token=token, user=UserFactory(username="eve"))
    assert "eve" not in roles(workspace)
    assert state_of(Invite.objects.get()) == "revoked"  # revoked with the account


def test_a_removal_refused_as_the_last_owner_revokes_nothing(team):
    workspace, olivia, oscar = team
    assert api_for(oscar).delete(member_url(workspace, olivia)).status_code == 204
    link = owner_link(workspace, oscar, role="member")
    refused = api_for(oscar).delete(member_url(workspace, oscar))
    assert (refused.status_code, refused.json()["code"]) == (409, "last_owner")
    assert state_of(Invite.objects.get(created_by=oscar)) == "open"
    assert accept_as(UserFactory(username="vic"), link).status_code == 302


def test_a_removal_that_fails_after_revoking_revokes_nothing(team, monkeypatch):
    """Revocation is part of the role change's transaction: a failure after it undoes it."""
    workspace, olivia, oscar = team
    owner_link(workspace, olivia)

    def broken_delete(self, *args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Membership, "delete", broken_delete)
    with pytest.raises(RuntimeError):
        services.member_remove(workspace=workspace, user_id=olivia.pk, actor=oscar)
    assert state_of(Invite.objects.get()) == "open"
    assert roles(workspace) == {"olivia": "owner", "oscar": "owner"}


def test_promoting_a_member_keeps_their_revoked_links_revoked(team):
    workspace, olivia, oscar = team
    link = owner_link(workspace, olivia)
    api = api_for(oscar)
    api.patch(member_url(workspace, olivia), {"role": "viewer"}, format="json")
    api.patch(member_url(workspace, olivia), {"role": "owner"}, format="json")
    assert accept_as(UserFactory(username="eve"), link).status_code == 410


def test_the_migration_revokes_open_links_whose_creator_is_no_longer_an_owner(team):
    """Links made before this rule by owners since removed or demoted are revoked on deploy."""
    workspace, olivia, oscar = team
    services.invite_create(workspace=workspace, role=Role.OWNER, actor=olivia)
    services.invite_create(workspace=workspace, role=Role.MEMBER, actor=oscar)
    Membership.objects.filter(user=olivia).update(role=Role.MEMBER)
    import_module("teams.migrations.0002_revoke_lapsed_invites").revoke_lapsed(apps, None)
    assert sorted((i.created_by.username, state_of(i)) for i in Invite.objects.all()) == [
        ("olivia", "revoked"),
        ("oscar", "open"),
    ]
