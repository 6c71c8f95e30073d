"""Joining a team through an invite link, end to end in headless Chromium (product.md §7b):
an owner makes a link on the members page and copies it; a new person opens it in a browser
of their own, signs up and joins in one step, lands on the board and watches it live.
Driven by role and label; outcomes checked through the running server's API; axe on every page."""

import re

import httpx
import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken
from tests.factories import UserFactory

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def api(board_server, owner):
    _, key = ApiToken.issue(user=owner)
    with httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"}) as client:
        yield client


def test_a_new_person_joins_through_an_invite_link_and_watches_the_board_live(
    board_server, chromium, open_page, open_board, axe, api, owner, workflow, board, make_task
):
    backlog, doing, done = board
    task = make_task(backlog, "Plan the launch")  # In Progress pulls it at once
    workspace = workflow.workspace

    # The owner makes a member's link on the members page and copies it
    members = open_page(owner, f"/workspaces/{workspace.pk}/members/")
    members.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=board_server.url)
    axe(members, "the members page")
    invites = members.get_by_role("region", name="Invite links")
    invites.get_by_label("Role").select_option(label="Member")
    invites.get_by_role("button", name="Invite").click()
    invites.get_by_role("button", name="Copy link").click()
    expect(invites.get_by_role("button", name="Copied")).to_be_visible()
    link = members.evaluate("navigator.clipboard.readText()")
    assert link == invites.get_by_label("New invite link (shown once; single use)").input_value()
    assert link.startswith(f"{board_server.url}/invites/")
    axe(members, "the members page with a new link")

    # A new person, in a browser of their own, signs up and joins in one step
    newcomer = chromium.new_context(viewport={"width": 1400, "height": 900})
    try:
        page = newcomer.new_page()
        page.goto(link)
        expect(page.get_by_role("heading", name=f"Join {workspace.name}")).to_be_visible()
        axe(page, "the invite page")
        page.get_by_label("Username").fill("nina")
        page.get_by_label("E-mail").fill("nina@example.com")
        page.get_by_label("Password", exact=True).fill("a long passphrase for nina")
        page.get_by_label("Password confirmation").fill("a long passphrase for nina")
        page.get_by_role("button", name="Sign up and join").click()

        # They land on the board, live
        page.wait_for_url(f"{board_server.url}/workflows/{workflow.pk}/")
        expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
        in_progress = page.get_by_role("region", name="In Progress")
        expect(in_progress.get_by_text("Plan the launch")).to_be_visible()
        axe(page, "the board, as the new member")

        # The owner moves the card on their board; the new member sees it arrive
        owners_board = open_board(owner, workflow)
        owners_board.get_by_role("region", name="In Progress").get_by_role("listitem").filter(
            has_text="Plan the launch"
        ).focus()
        owners_board.keyboard.press("Shift+ArrowRight")
        expect(page.get_by_role("region", name="Done").get_by_text("Plan the launch")).to_be_visible()
        expect(in_progress.get_by_text("Plan the launch")).to_have_count(0)
        assert page.url == f"{board_server.url}/workflows/{workflow.pk}/"  # no reload
    finally:
        newcomer.close()

    roles = {m["username"]: m["role"] for m in api.get(f"/api/v1/workspaces/{workspace.pk}/members/").json()}
    assert roles == {"olivia": "owner", "nina": "member"}
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["step_id"] == str(done.pk)
    (made,) = api.get(f"/api/v1/workspaces/{workspace.pk}/invites/").json()
    assert (made["state"], made["used_by"]) == ("used", "nina")
    assert members.errors == [] and owners_board.errors == []


def test_a_person_invited_by_name_accepts_on_their_home_page(open_page, axe, api, owner, workflow):
    workspace = workflow.workspace
    UserFactory(username="vera")
    members = open_page(owner, f"/workspaces/{workspace.pk}/members/")
    adding = members.get_by_role("region", name="Add a member")
    adding.get_by_label("Username or e-mail").fill("vera")
    adding.get_by_label("Role").select_option(label="Viewer")
    adding.get_by_role("button", name="Send invitation").click()
    expect(members.get_by_role("status")).to_have_text("vera is invited as viewer. They join once they accept.")
    expect(members.get_by_role("table", name="Waiting for an answer").get_by_role("row", name="vera")).to_be_visible()
    axe(members, "the members page with a pending invitation")

    home = open_page(UserFactory(username="vera"), "/")
    invitations = home.get_by_role("region", name="Invitations")
    expect(invitations).to_contain_text(f"olivia invited you to join {workspace.name} as viewer.")
    axe(home, "the home page with an invitation")
    invitations.get_by_role("button", name=f"Accept the invitation to {workspace.name}").click()
    expect(home.get_by_role("heading", name=re.compile(f"^{re.escape(workspace.name)}"))).to_be_visible()
    expect(home.get_by_role("region", name="Invitations")).to_have_count(0)

    roles = {m["username"]: m["role"] for m in api.get(f"/api/v1/workspaces/{workspace.pk}/members/").json()}
    assert roles == {"olivia": "owner", "vera": "viewer"}
    assert members.errors == [] and home.errors == []
