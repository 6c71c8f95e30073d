"""Invitations by username or e-mail: nobody joins a workspace without
consent, and the owner's answer never says whether the address names an account."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from tests.clients import api_for
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    board = WorkflowFactory(name="Delivery", workspace__name="Platform")
    workspace = board.workspace
    owner = MembershipFactory(workspace=workspace, user=UserFactory(username="olivia"), role=Role.OWNER).user
    vera = UserFactory(username="vera", email="Vera@Example.com")
    return workspace, owner, vera


def members_url(workspace):
    return f"/api/v1/workspaces/{workspace.pk}/members/"


def usernames(workspace) -> set:
    return set(Membership.objects.filter(workspace=workspace).values_list("user__username", flat=True))


def invite(owner, workspace, body):
    return api_for(owner).post(members_url(workspace), body, format="json")


def shape(response) -> tuple:
    """What an owner learns from an answer: its status, its fields, and every value but the
    invitation's own id and time."""
    body = response.json()
    return response.status_code, sorted(body), {k: v for k, v in body.items() if k not in ("id", "created_at")}


def test_inviting_someone_adds_nobody_until_they_accept(team):
    workspace, owner, vera = team
    response = invite(owner, workspace, {"username": "vera", "role": "viewer", "wip_limit": 2})
    assert response.status_code == 202
    body = response.json()
    assert {k: body[k] for k in ("username", "email", "role", "wip_limit", "state")} == {
        "username": "vera",
        "email": None,
        "role": "viewer",
        "wip_limit": 2,
        "state": "pending",
    }
    assert "user_id" not in body
    listed = [m["username"] for m in api_for(owner).get(members_url(workspace)).json()]
    assert listed == ["olivia"]

    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    assert {k: pending[k] for k in ("workspace_name", "role", "invited_by", "state")} == {
        "workspace_name": "Platform",
        "role": "viewer",
        "invited_by": "olivia",
        "state": "pending",
    }
    accepted = api_for(vera).post(f"/api/v1/me/invitations/{pending['id']}/accept/")
    assert accepted.status_code == 200
    assert accepted.json()["state"] == "accepted"
    members = {m["username"]: (m["role"], m["wip_limit"]) for m in api_for(owner).get(members_url(workspace)).json()}
    assert members == {"olivia": ("owner", 0), "vera": ("viewer", 2)}
    assert api_for(vera).get("/api/v1/me/invitations/").json() == []


@pytest.mark.parametrize(
    ("known", "unknown"),
    [
        ({"username": "vera"}, {"username": "nobody"}),
        ({"email": "vera@example.com"}, {"email": "nobody@example.com"}),
    ],
)
def test_the_answer_is_the_same_whether_or_not_the_account_exists(team, known, unknown):
    workspace, owner, _ = team
    answers, queries = [], []
    for body in (known, unknown):
        with CaptureQueriesContext(connection) as ran:
            answers.append(invite(owner, workspace, {**body, "role": "member"}))
        queries.append(len(ran.captured_queries))
    first, second = (shape(a) for a in answers)
    assert first[0] == second[0] == 202
    assert first[1] == second[1]
    assert {k: v for k, v in first[2].items() if k not in known} == {
        k: v for k, v in second[2].items() if k not in unknown
    }
    assert queries[0] == queries[1]  # the same work either way: no timing tells them apart
    assert usernames(workspace) == {"olivia"}


def test_a_declined_invitation_adds_nobody_and_is_gone(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"email": "vera@example.com"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    declined = api_for(vera).post(f"/api/v1/me/invitations/{pending['id']}/decline/")
    assert (declined.status_code, declined.json()["state"]) == (200, "declined")
    assert api_for(vera).get("/api/v1/me/invitations/").json() == []
    assert api_for(vera).post(f"/api/v1/me/invitations/{pending['id']}/accept/").status_code == 404
    assert usernames(workspace) == {"olivia"}


def test_only_the_invited_person_sees_or_answers_an_invitation(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"username": "vera"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    mallory = UserFactory(username="mallory")
    assert api_for(mallory).get("/api/v1/me/invitations/").json() == []
    for action in ("accept", "decline"):
        assert api_for(mallory).post(f"/api/v1/me/invitations/{pending['id']}/{action}/").status_code == 404
    assert api_for(owner).post(f"/api/v1/me/invitations/{pending['id']}/accept/").status_code == 404
    assert APIClient().get("/api/v1/me/invitations/").status_code == 401
    assert usernames(workspace) == {"olivia"}


def test_an_invitation_from_someone_no_longer_an_owner_is_gone_and_cannot_be_accepted(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"username": "vera", "role": "owner"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    second = MembershipFactory(workspace=workspace, role=Role.OWNER).user
    Membership.objects.filter(workspace=workspace, user=owner).update(role=Role.MEMBER)
    assert api_for(vera).get("/api/v1/me/invitations/").json() == []
    refused = api_for(vera).post(f"/api/v1/me/invitations/{pending['id']}/accept/")
    assert (refused.status_code, refused.json()["code"]) == (409, "invitation_withdrawn")
    assert usernames(workspace) == {"olivia", second.username}


def test_an_invitation_from_a_deactivated_owner_is_gone_and_cannot_be_accepted(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"username": "vera", "role": "owner"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    owner.is_active = False
    owner.save()
    assert api_for(vera).get("/api/v1/me/invitations/").json() == []
    refused = api_for(vera).post(f"/api/v1/me/invitations/{pending['id']}/accept/")
    assert (refused.status_code, refused.json()["code"]) == (409, "invitation_withdrawn")
    assert usernames(workspace) == {"olivia"}


def test_inviting_again_updates_the_pending_invitation(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"username": "vera", "role": "viewer"})
    invite(owner, workspace, {"username": "vera", "role": "member"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    assert pending["role"] == "member"


def signed_in(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def test_the_members_page_says_the_same_for_any_address_and_lists_pending_invitations(team):
    workspace, owner, _ = team
    browser = signed_in(owner)
    page = f"/workspaces/{workspace.pk}/members/"
    known = browser.post(page, {"action": "add", "who": "vera", "role": "viewer"}, follow=True).content.decode()
    unknown = browser.post(page, {"action": "add", "who": "nobody", "role": "viewer"}, follow=True).content.decode()
    assert "vera is invited as viewer. They join once they accept." in known
    assert "nobody is invited as viewer. They join once they accept." in unknown
    assert "No such user" not in unknown
    assert usernames(workspace) == {"olivia"}
    listing = browser.get(page).content.decode()
    assert 'aria-label="Withdraw the invitation of vera"' in listing
    assert 'aria-label="Withdraw the invitation of nobody"' in listing


def test_an_owner_withdraws_an_invitation_on_the_members_page(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"username": "vera"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    page = f"/workspaces/{workspace.pk}/members/"
    done = signed_in(owner).post(page, {"action": "withdraw", "invitation_id": pending["id"]}, follow=True)
    assert "The invitation was withdrawn." in done.content.decode()
    assert api_for(vera).get("/api/v1/me/invitations/").json() == []


def test_the_invited_person_sees_the_invitation_on_their_home_page_with_accept_and_decline(team):
    workspace, owner, vera = team
    invite(owner, workspace, {"username": "vera", "role": "viewer"})
    (pending,) = api_for(vera).get("/api/v1/me/invitations/").json()
    home = signed_in(vera).get("/").content.decode()
    assert "olivia invited you to join Platform as viewer." in home
    assert f'data-api-url="/api/v1/me/invitations/{pending["id"]}/accept/"' in home
    assert f'data-api-url="/api/v1/me/invitations/{pending["id"]}/decline/"' in home
    assert "olivia invited you" not in signed_in(UserFactory(username="sam")).get("/").content.decode()
