"""Invite links: owners make, list and revoke them; opening one lets a
signed-in person join, or a new person sign up and join, in one step; single use."""

import datetime
import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from teams import services
from teams.models import Invite
from tests.clients import api_for
from tests.concurrency import race, rounds
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db
PASSPHRASE = "a-long-passphrase-1"


@pytest.fixture
def team():
    board = WorkflowFactory(name="Delivery")
    owner = MembershipFactory(workspace=board.workspace, user=UserFactory(username="olivia"), role=Role.OWNER).user
    return board.workspace, board, owner


def invites_url(workspace):
    return f"/api/v1/workspaces/{workspace.pk}/invites/"


def make_invite(workspace, owner, **body) -> dict:
    response = api_for(owner).post(invites_url(workspace), body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def path_of(invite: dict) -> str:
    return re.sub(r"^https?://[^/]+", "", invite["url"])


def test_an_owner_makes_an_invite_link_that_expires_in_seven_days_by_default(team):
    workspace, _, owner = team
    invite = make_invite(workspace, owner, role="viewer")
    assert set(invite) == {"id", "url", "role", "expires_at"}
    assert invite["role"] == "viewer"
    assert re.fullmatch(r"http://testserver/invites/[\w-]{40,}/", invite["url"])
    expires = datetime.datetime.fromisoformat(invite["expires_at"])
    assert abs(expires - (timezone.now() + datetime.timedelta(days=7))) < datetime.timedelta(minutes=1)
    token = path_of(invite).split("/")[2]
    assert not Invite.objects.filter(token_hash=token).exists()  # only its hash is stored


def test_the_list_shows_each_invite_with_its_state_but_never_its_link(team):
    workspace, _, owner = team
    kept = make_invite(workspace, owner)
    revoked = make_invite(workspace, owner, role="viewer", expires_in_days=2)
    assert api_for(owner).delete(f"{invites_url(workspace)}{revoked['id']}/").status_code == 204
    listed = api_for(owner).get(invites_url(workspace)).json()
    assert {i["id"]: i["state"] for i in listed} == {kept["id"]: "open", revoked["id"]: "revoked"}
    assert all("url" not in i for i in listed)


@pytest.mark.parametrize("days", [0, 91, "soon"])
def test_an_expiry_outside_one_to_ninety_days_is_refused(team, days):
    workspace, _, owner = team
    response = api_for(owner).post(invites_url(workspace), {"expires_in_days": days}, format="json")
    assert response.status_code == 400
    assert "expires_in_days" in response.json()["errors"]
    assert not Invite.objects.exists()


ACCEPT = "/invites/accept/"


def opened(browser: Client, invite: dict) -> str:
    """Open the link as a browser does; the page it leads to has no token in its address."""
    first = browser.get(path_of(invite))
    assert (first.status_code, first["Location"]) == (302, ACCEPT)
    return ACCEPT


def test_the_token_is_in_one_request_at_most_and_never_in_the_sign_in_links_next(team):
    workspace, _, owner = team
    invite = make_invite(workspace, owner, role="viewer")
    token = path_of(invite).split("/")[2]
    UserFactory(username="vic")
    browser = Client()
    later = []  # every request line and redirect after the link's own
    page = browser.get(path_of(invite), follow=True)
    later += [url for url, _ in page.redirect_chain]
    assert page.status_code == 200
    html = page.content.decode()
    (sign_in,) = re.findall(r'href="(/accounts/login/[^"]*)"', html)
    assert sign_in == "/accounts/login/?next=/invites/accept/"
    signed_in = browser.post(sign_in, {"username": "vic", "password": "pw-for-tests-only"}, follow=True)
    later += [url for url, _ in signed_in.redirect_chain]
    assert "Join " + workspace.name in signed_in.content.decode()
    joined = browser.post(ACCEPT)
    later.append(joined["Location"])
    assert Membership.objects.get(workspace=workspace, user__username="vic").role == Role.VIEWER
    assert later and not any(token in url for url in later)
    assert token not in html and token not in signed_in.content.decode()


def test_the_page_without_an_opened_link_is_not_found():
    assert Client().get(ACCEPT).status_code == 404


def test_a_new_person_signs_up_and_joins_in_one_step(team):
    workspace, board, owner = team
    browser = Client()
    link = opened(browser, make_invite(workspace, owner, role="member"))
    page = browser.get(link)
    assert page.status_code == 200
    assert "Join Delivery" not in page.content.decode()  # no one-click join before signing up
    assert "Sign up and join" in page.content.decode()
    joined = browser.post(
        link, {"username": "nora", "email": "nora@example.com", "password1": PASSPHRASE, "password2": PASSPHRASE}
    )
    assert joined.status_code == 302
    assert joined["Location"] == f"/workflows/{board.pk}/"
    nora = get_user_model().objects.get(username="nora")
    assert Membership.objects.get(workspace=workspace, user=nora).role == Role.MEMBER
    assert browser.get(joined["Location"]).status_code == 200  # signed in, on the board


def test_a_signed_in_person_joins_with_one_click(team):
    workspace, board, owner = team
    browser = Client()
    browser.force_login(UserFactory(username="vic"))
    link = opened(browser, make_invite(workspace, owner, role="viewer"))
    assert "Join " + workspace.name in browser.get(link).content.decode()
    assert browser.post(link)["Location"] == f"/workflows/{board.pk}/"
    assert Membership.objects.get(workspace=workspace, user__username="vic").role == Role.VIEWER


def test_a_link_is_single_use(team):
    workspace, _, owner = team
    invite = make_invite(workspace, owner)
    first, second = Client(), Client()
    first.force_login(UserFactory(username="ann"))
    second.force_login(UserFactory(username="bob"))
    link = opened(first, invite)
    opened(second, invite)
    assert first.post(link).status_code == 302
    again = second.post(link)
    assert again.status_code == 410
    assert "already been used" in again.content.decode()
    assert not Membership.objects.filter(user__username="bob").exists()


def test_a_sign_up_through_a_used_link_creates_no_account(team):
    workspace, _, owner = team
    invite = make_invite(workspace, owner)
    member, late = Client(), Client()
    member.force_login(UserFactory(username="ann"))
    link = opened(member, invite)
    opened(late, invite)
    member.post(link)
    page = late.post(
        link, {"username": "late", "email": "late@example.com", "password1": PASSPHRASE, "password2": PASSPHRASE}
    )
    assert page.status_code == 410
    assert not get_user_model().objects.filter(username="late").exists()


def test_an_expired_or_revoked_link_says_so_and_joins_nobody(team):
    workspace, _, owner = team
    expired = make_invite(workspace, owner)
    Invite.objects.filter(pk=expired["id"]).update(expires_at=timezone.now() - datetime.timedelta(seconds=1))
    revoked = make_invite(workspace, owner)
    api_for(owner).delete(f"{invites_url(workspace)}{revoked['id']}/")
    browser = Client()
    browser.force_login(UserFactory(username="eve"))
    for invite, words in ((expired, "has expired"), (revoked, "has been revoked")):
        link = opened(browser, invite)
        for response in (browser.get(link), browser.post(link)):
            assert response.status_code == 410
            assert words in response.content.decode()
    assert not Membership.objects.filter(user__username="eve").exists()


def test_an_unknown_link_is_not_found():
    assert Client().get("/invites/not-a-real-token/").status_code == 404


def test_a_member_opening_an_invite_keeps_their_role_and_leaves_the_link_unused(team):
    workspace, _, owner = team
    browser = Client()
    browser.force_login(owner)
    link = opened(browser, make_invite(workspace, owner, role="viewer"))
    assert browser.post(link).status_code == 302
    assert Membership.objects.get(workspace=workspace, user=owner).role == Role.OWNER
    assert Invite.objects.get().used_at is None


def test_a_bad_sign_up_shows_the_field_errors_and_creates_nothing(team):
    workspace, _, owner = team
    browser = Client()
    link = opened(browser, make_invite(workspace, owner))
    page = browser.post(link, {"username": "olivia", "password1": "x", "password2": "y"})
    assert page.status_code == 400
    assert "already exists" in page.content.decode()
    assert Invite.objects.get().used_at is None


@pytest.mark.django_db(transaction=True)
@rounds(5)
def test_one_link_opened_by_many_at_once_lets_exactly_one_join():
    board = WorkflowFactory()
    owner = MembershipFactory(workspace=board.workspace, role=Role.OWNER).user
    _, token = services.invite_create(workspace=board.workspace, role=Role.MEMBER, actor=owner)
    people = [UserFactory() for _ in range(6)]
    results = race(len(people), lambda i: services.invite_accept(token=token, user=people[i]))
    joined = [r for r in results if isinstance(r, Membership)]
    refused = [r for r in results if isinstance(r, services.InviteUnusable)]
    assert (len(joined), len(refused)) == (1, 5), results
    assert Membership.objects.filter(workspace=board.workspace).count() == 2
