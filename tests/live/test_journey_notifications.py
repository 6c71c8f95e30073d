"""A person hears of news live, in headless Chromium against a real server: someone assigns
them a task, or mentions them in a comment, and their bell's count rises without a reload
(its accessible name and a live region say so); they open the inbox, mark one read, then
all. At 390 px and in dark mode; axe-core checks every page as each chapter leaves it.
Outcomes are checked through the API."""

import httpx
import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser]


def test_the_bell_counts_live_and_the_inbox_marks_read(journey):
    journey.walk(assigned_work_rings_the_bell_and_the_inbox_marks_it_read)


def assigned_work_rings_the_bell_and_the_inbox_marks_it_read(open_page, api, board, make_task, board_server):
    workflow = board[0].workflow
    bob = UserFactory(username="bob")
    MembershipFactory(workspace=workflow.workspace, user=bob, role=Role.MEMBER)
    tasks = [make_task(board[0], title) for title in ("Renew the certificate", "Rotate the keys")]
    _, key = ApiToken.issue(user=bob)
    as_bob = httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"})

    page = open_page(bob, f"/workflows/{workflow.pk}/", width=390, height=844)
    page.emulate_media(color_scheme="dark")
    bell = page.get_by_role("link", name="Notifications, none unread")
    expect(bell).to_be_visible()

    assert api.patch(f"/api/v1/tasks/{tasks[0].pk}/", json={"assignee_id": bob.pk}).status_code == 200
    expect(page.get_by_role("link", name="Notifications, 1 unread")).to_be_visible()  # live, no reload
    expect(page.locator("#bell-status")).to_have_text("1 unread notification")  # the polite live region
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    page.get_by_role("link", name="Notifications, 1 unread").click()
    expect(page.get_by_role("heading", name="Inbox")).to_be_visible()
    news = page.get_by_role("link", name="olivia assigned “Renew the certificate” to you")
    expect(news).to_be_visible()
    page.get_by_role("button", name="Mark read: olivia assigned “Renew the certificate” to you").click()
    expect(page.get_by_role("link", name="Notifications, none unread")).to_be_visible()
    assert as_bob.get("/api/v1/notifications/?unread=true").json()["count"] == 0

    assert api.patch(f"/api/v1/tasks/{tasks[1].pk}/", json={"assignee_id": bob.pk}).status_code == 200
    expect(page.get_by_role("link", name="Notifications, 1 unread")).to_be_visible()
    page.reload()
    page.get_by_role("button", name="Mark all read").click()
    expect(page.get_by_text("All notifications are marked read.")).to_be_visible()
    expect(page.get_by_role("link", name="Notifications, none unread")).to_be_visible()
    listed = as_bob.get("/api/v1/notifications/").json()["results"]
    assert [(n["kind"], n["read"]) for n in listed] == [("assigned", True), ("assigned", True)]

    # A comment that mentions bob rings his bell too, live.
    mention = {"body": "Can you check the dates, @bob?"}
    assert api.post(f"/api/v1/tasks/{tasks[1].pk}/comments/", json=mention).status_code == 201
    expect(page.get_by_role("link", name="Notifications, 1 unread")).to_be_visible()
    newest = as_bob.get("/api/v1/notifications/?unread=true").json()["results"]
    assert [(n["kind"], n["task_id"]) for n in newest] == [("mentioned", str(tasks[1].pk))]
    as_bob.close()


def test_an_owner_subscribes_a_webhook_and_sees_its_secret_once(journey):
    journey.walk(an_owner_adds_and_deletes_a_webhook)


def an_owner_adds_and_deletes_a_webhook(open_page, owner, workflow, api):
    page = open_page(owner, f"/workspaces/{workflow.workspace_id}/members/", width=390, height=844)
    page.get_by_role("link", name=f"Outbound webhooks of {workflow.workspace.name}").click()
    page.get_by_role("button", name="Add the webhook").click()  # nothing chosen: refused, said why
    expect(page.get_by_role("alert")).to_contain_text("Enter the URL to send events to.")
    page.get_by_label("URL").fill("https://hooks.example.com/kandev")
    page.get_by_role("checkbox", name="task.moved").check()
    page.get_by_role("button", name="Add the webhook").click()
    secret = page.get_by_label("Secret").input_value()
    assert len(secret) > 30
    (listed,) = api.get(f"/api/v1/webhooks/?workspace={workflow.workspace_id}").json()["results"]
    assert (listed["url"], listed["events"], "secret" in listed) == (
        "https://hooks.example.com/kandev",
        ["task.moved"],
        False,
    )
    page.goto(page.url)  # a fresh read, not the form sent again
    expect(page.get_by_label("Secret")).to_have_count(0)  # shown once
    page.get_by_role("button", name="Delete the webhook to https://hooks.example.com/kandev").click()
    expect(page.get_by_text("No webhooks yet.")).to_be_visible()
    assert api.get("/api/v1/webhooks/").json()["results"] == []
