"""The limits in the task detail dialog, in headless Chromium, driven by role and label
(product.md §2b, §7): assignee and class of service saved through PATCH with the server's
refusals shown, why the task waits in words, and its agent sessions with Start and Cancel.
Outcomes are read back through the REST API."""

import pytest
from playwright.sync_api import expect

from boards.admission import task_create
from tests.factories import MembershipFactory, UserFactory, development_board
from tests.live.test_agents_board import shot
from tests.live.test_browser import card, column, off_loop
from tests.live.test_task_detail import button, dialog, field, history
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def make_task(owner):
    def make(step, title, **kwargs):
        return off_loop(task_create, workflow=step.workflow, step=step, actor=owner, title=title, **kwargs).task

    return make


@pytest.fixture
def alice(workflow):
    """A member with a personal limit of one task in progress."""
    user = UserFactory(username="alice", first_name="Alice", last_name="Brown")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER, wip_limit=1)
    return user


def task_now(api, task) -> dict:
    response = api.get(f"/api/v1/tasks/{task.pk}/")
    assert response.status_code == 200
    return response.json()


def test_assignee_and_class_of_service_save_and_a_refusal_shows_its_limit(
    open_board, axe, live_api, owner, alice, workflow, board, make_task
):
    backlog, doing, done = board
    alices = make_task(doing, "Alice's work", assignee_id=alice.pk)  # Alice is at her limit (1 of 1)
    fix = make_task(doing, "Fix the login")
    page = open_board(owner, workflow)

    card(page, fix).click()
    expect(field(page, "Assignee")).to_have_value("")
    expect(field(page, "Class of service")).to_have_value("standard")
    field(page, "Assignee").select_option(label="Alice Brown")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("alert")).to_have_text("alice is at their WIP limit (1 of 1).")
    assert task_now(live_api, fix)["assignee_id"] is None

    field(page, "Assignee").select_option(label="olivia")
    field(page, "Class of service").select_option(label="Expedite")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Saved.")
    saved = task_now(live_api, fix)
    assert (saved["assignee_id"], saved["class_of_service"]) == (owner.pk, "expedite")
    expect(card(page, fix).locator('[data-role="assignee-initials"]')).to_have_text("OL")
    expect(card(page, fix).locator('[data-role="expedite"]')).to_be_visible()
    expect(history(page).filter(has_text="Assigned to olivia")).to_have_count(1)
    expect(history(page).filter(has_text="Class of service: Expedite")).to_have_count(1)
    axe(page, "the task detail with its assignee and class")
    button(page, "Close").click()

    # The board's expedite limit is 1, and In Progress holds it now: Alice's work cannot be
    # expedited too.
    card(page, alices).click()
    field(page, "Class of service").select_option(label="Expedite")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("alert")).to_have_text(
        "This board already has 1 expedite task in progress (limit 1)."
    )
    assert task_now(live_api, alices)["class_of_service"] == "standard"
    assert page.errors == []


@pytest.fixture
def grouped(workflow, owner):
    return development_board(workflow)[:4]


def test_the_detail_says_why_a_task_waits_and_follows_the_board(
    open_board, axe, live_api, owner, alice, workflow, grouped, make_task
):
    backlog, build, review, done = grouped
    make_task(build, "Alice's build", assignee_id=alice.pk)  # Alice is at her limit
    reviewed = make_task(review, "Review the schema")  # the group is full
    alices = make_task(backlog, "Alice's next", assignee_id=alice.pk)
    make_task(backlog, "Idea 1")
    last = make_task(backlog, "Idea 2")
    page = open_board(owner, workflow)
    note = dialog(page).locator('[data-role="waiting-note"]')

    card(page, alices).click()
    expect(note).to_have_text(
        "Waiting: next for Build — held by group Development (2 of 2), alice's personal limit (1 of 1);"
        " skipped: assignee full"
    )
    waiting = task_now(live_api, alices)["waiting"]
    assert (waiting["state"], waiting["position"], waiting["skipped_because"]) == (
        "waiting_for_pull",
        1,
        "assignee_full",
    )
    assert [limit["scope"] for limit in waiting["held_by"]] == ["group", "person"]
    axe(page, "the task detail of a waiting task")
    shot(page, "task-detail-waiting")
    button(page, "Close").click()

    card(page, last).click()
    expect(note).to_have_text("Waiting: 2nd for Build — held by group Development (2 of 2)")
    # When the review is done, the group has room: Build passes Alice's task over (she is
    # full) and pulls Idea 1, so Idea 2 is next; the open dialog follows.
    assert live_api.post(f"/api/v1/tasks/{reviewed.pk}/move/", json={"step_id": str(done.pk)}).status_code == 200
    expect(note).to_have_text("Waiting: next for Build — held by group Development (2 of 2)")
    expect(column(page, build).locator(".card-title")).to_have_text(["Alice's build", "Idea 1"])
    assert task_now(live_api, last)["waiting"]["position"] == 1
    assert page.errors == []


def test_the_detail_lists_the_agent_sessions_and_starts_and_cancels_one(
    open_board, axe, live_api, owner, workflow, board, make_task
):
    backlog, doing, done = board
    task = make_task(doing, "Refactor the parser")
    page = open_board(owner, workflow)
    sessions = dialog(page).locator('[data-role="sessions"] li')

    card(page, task).click()
    expect(dialog(page).get_by_text("No agent has worked on this task.")).to_be_visible()
    button(page, "Start agent").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Agent started.")
    expect(sessions).to_have_count(1)
    expect(sessions.first.locator('[data-role="status-text"]')).to_have_text("Agent starting")
    expect(button(page, "Cancel")).to_be_focused()
    expect(button(page, "Start agent")).to_be_hidden()
    (session,) = live_api.get(f"/api/v1/sessions/?task={task.pk}").json()["results"]
    assert session["status"] == "starting"
    axe(page, "the task detail with an agent session")

    # A runner boots it elsewhere: the open dialog follows.
    assert live_api.post(f"/api/v1/sessions/{session['id']}/events/", json={"type": "boot_ready"}).status_code == 200
    expect(sessions.first.locator('[data-role="status-text"]')).to_have_text("Agent running")

    button(page, "Cancel").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Agent session cancelled.")
    expect(sessions.first.locator('[data-role="status-text"]')).to_have_text("Agent cancelled")
    expect(button(page, "Start agent")).to_be_focused()
    assert live_api.get(f"/api/v1/sessions/{session['id']}/").json()["status"] == "cancelled"
    button(page, "Close").click()

    # A viewer sees the sessions, and neither button.
    viewer = UserFactory(username="vic")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    watching = open_board(viewer, workflow)
    card(watching, task).click()
    expect(dialog(watching).locator('[data-role="sessions"] li')).to_have_count(1)
    expect(dialog(watching).get_by_role("button", name="Start agent")).to_have_count(0)
    expect(dialog(watching).get_by_role("button", name="Cancel")).to_have_count(0)
    expect(dialog(watching).get_by_text("Assignee: nobody · Class of service: Standard")).to_be_visible()
    axe(watching, "the task detail as a viewer")
    assert page.errors == [] and watching.errors == []
