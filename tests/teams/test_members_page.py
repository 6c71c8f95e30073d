"""The members page, driven as a browser's forms post it."""

import pytest
from django.test import Client

from teams import invitations
from teams.models import Invite
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    workspace = WorkspaceFactory(name="Platform")
    owner = MembershipFactory(workspace=workspace, user=UserFactory(username="olivia"), role=Role.OWNER).user
    member = MembershipFactory(workspace=workspace, user=UserFactory(username="mike")).user
    return workspace, owner, member


def signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def page_of(workspace) -> str:
    return f"/workspaces/{workspace.pk}/members/"


def test_members_see_who_is_in_but_only_owners_get_the_forms(team):
    workspace, owner, member = team
    as_member = signed_in(member).get(page_of(workspace)).content.decode()
    assert "olivia" in as_member and "mike" in as_member
    assert "Send invitation" not in as_member and "Invite" not in as_member
    assert "Leave" in as_member
    as_owner = signed_in(owner).get(page_of(workspace)).content.decode()
    assert "Send invitation" in as_owner and 'aria-label="Remove mike"' in as_owner


def test_a_stranger_gets_not_found(team):
    workspace, _, _ = team
    assert signed_in(UserFactory()).get(page_of(workspace)).status_code == 404


def test_an_owner_adds_changes_and_removes_a_member(team):
    workspace, owner, member = team
    vera = UserFactory(username="vera", email="vera@example.com")
    browser = signed_in(owner)
    added = browser.post(
        page_of(workspace), {"action": "add", "who": "vera@example.com", "role": "viewer"}, follow=True
    )
    assert "vera@example.com is invited as viewer. They join once they accept." in added.content.decode()
    (invitation,) = invitations.invitations_for(vera)
    invitations.invitation_accept(invitation_id=invitation.pk, user=vera)
    browser.post(page_of(workspace), {"action": "role", "user_id": member.pk, "role": "owner"})
    browser.post(page_of(workspace), {"action": "remove", "user_id": member.pk})
    roles = dict(Membership.objects.filter(workspace=workspace).values_list("user__username", "role"))
    assert roles == {"olivia": "owner", "vera": "viewer"}


def test_a_refusal_is_shown_and_changes_nothing(team):
    workspace, owner, _ = team
    browser = signed_in(owner)
    refused = browser.post(page_of(workspace), {"action": "add", "who": "a@b@c", "role": "member"}, follow=True)
    assert "Enter a valid email address." in refused.content.decode()
    last = browser.post(page_of(workspace), {"action": "remove", "user_id": owner.pk}, follow=True)
    assert "olivia is the last owner and cannot be removed." in last.content.decode()
    assert Membership.objects.filter(workspace=workspace).count() == 2


def test_a_member_can_leave_but_cannot_change_others(team):
    workspace, owner, member = team
    browser = signed_in(member)
    assert (
        browser.post(page_of(workspace), {"action": "role", "user_id": owner.pk, "role": "viewer"}).status_code == 403
    )
    left = browser.post(page_of(workspace), {"action": "remove", "user_id": member.pk})
    assert left["Location"] == "/"
    assert not Membership.objects.filter(workspace=workspace, user=member).exists()


def test_an_owner_makes_a_link_sees_it_once_and_revokes_it(team):
    workspace, owner, _ = team
    browser = signed_in(owner)
    made = browser.post(page_of(workspace), {"action": "invite", "role": "member", "expires_in_days": 3})
    assert made.status_code == 200
    assert "http://testserver/invites/" in made.content.decode()
    listing = browser.get(page_of(workspace)).content.decode()
    assert "http://testserver/invites/" not in listing and ">open<" in listing.replace("\n", "")
    invite = Invite.objects.get()
    browser.post(page_of(workspace), {"action": "revoke", "invite_id": invite.pk})
    invite.refresh_from_db()
    assert invite.revoked_at is not None
