"""Agents on the board in headless Chromium (product.md §7): each card says what its agent
session is doing, the header shows the agent capacity of the board and its workspace, both
live; the step settings edit the session limits. Sessions are started and reported through
the running server's API, as a person and a runner would; outcomes are checked there too."""

import os
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AUTO_START = {"on_enter": [{"type": "auto_start_agent"}], "on_turn_complete": [], "on_exit": []}
# Where the screenshots a person looks at go (KANDEV_SHOTS=<dir>); none are taken otherwise.
SHOTS = os.environ.get("KANDEV_SHOTS")


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


@pytest.fixture
def api(board_server, owner):
    """The REST API of the server the browser talks to, as the owner."""
    _, key = ApiToken.issue(user=owner)
    with httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"}) as client:
        yield client


@pytest.fixture
def agent_board(workflow, board):
    """The board, which runs one agent session at a time."""
    workflow.max_parallel_sessions = 1
    workflow.save()
    return board


def card(page, title):
    return page.locator(".card").filter(has=page.locator(".card-title", has_text=title))


def agents_header(page):
    return page.locator('[data-role="agents"]')


def session_of(api, task) -> dict:
    (session,) = [s for s in api.get("/api/v1/sessions/").json()["results"] if s["task_id"] == str(task.pk)]
    return session


def report(api, session, type_):
    assert api.post(f"/api/v1/sessions/{session['id']}/events/", json={"type": type_}).is_success


def test_sessions_started_through_the_api_show_on_the_cards_and_in_the_header_live(
    open_board, axe, api, owner, workflow, agent_board, make_task
):
    backlog, doing, done = agent_board
    first, second = make_task(backlog, "Fix the login"), make_task(backlog, "Write the docs")
    plain = make_task(done, "Shipped")
    page = open_board(owner, workflow)
    expect(agents_header(page)).to_have_text("Agents: 0/1 running, 0 queued Workspace: 0 running, 0 queued")

    # When both are started by hand: one slot, so the second waits for it
    answers = [api.post(f"/api/v1/tasks/{task.pk}/sessions/", json={}).status_code for task in (first, second)]
    assert answers == [201, 202]  # started; queued
    expect(card(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent starting")
    expect(card(page, "Write the docs").locator('[data-role="agent"]')).to_have_text("Agent queued (1st)")
    expect(agents_header(page)).to_have_text("Agents: 1/1 running, 1 queued Workspace: 1 running, 1 queued")
    expect(card(page, "Shipped").locator('[data-role="agent"]')).to_be_hidden()
    assert [session_of(api, t)["status"] for t in (first, second)] == ["starting", "queued"]
    axe(page, "the board with agents")

    # When the runner boots the first, then it fails: the second gets the slot
    report(api, session_of(api, first), "boot_ready")
    expect(card(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent running")
    expect(card(page, "Fix the login").locator('[data-role="agent"]')).to_have_attribute("data-status", "running")
    shot(page, "board-agents-running-and-queued")
    report(api, session_of(api, first), "failed")
    expect(card(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent failed")
    expect(card(page, "Write the docs").locator('[data-role="agent"]')).to_have_text("Agent starting")
    expect(agents_header(page)).to_have_text("Agents: 1/1 running, 0 queued Workspace: 1 running, 0 queued")
    assert [session_of(api, t)["status"] for t in (first, second)] == ["failed", "starting"]
    assert api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()["agents"]["running"] == 1
    axe(page, "the board with a failed agent")
    assert plain and page.errors == []


def test_a_step_s_agents_queue_in_line_and_move_up_live(open_board, api, owner, workflow, agent_board, make_task):
    backlog, doing, done = agent_board
    workflow.workspace.max_concurrent_sessions = 4
    workflow.workspace.save()
    doing.events, doing.wip_limit = AUTO_START, 0  # every task it admits starts an agent, or queues one
    doing.save()
    tasks = [make_task(doing, title) for title in ("Alpha", "Bravo", "Charlie", "Delta")]
    page = open_board(owner, workflow)
    expect(page.locator('[data-role="agent"]:visible')).to_have_text(
        ["Agent starting", "Agent queued (1st)", "Agent queued (2nd)", "Agent queued (3rd)"]
    )
    expect(agents_header(page)).to_have_text("Agents: 1/1 running, 3 queued Workspace: 1/4 running, 3 queued")

    # When Alpha's turn completes, everyone behind it moves up one place
    report(api, session_of(api, tasks[0]), "boot_ready")
    report(api, session_of(api, tasks[0]), "turn_completed")
    expect(page.locator('[data-role="agent"]:visible')).to_have_text(
        ["Agent starting", "Agent queued (1st)", "Agent queued (2nd)"]
    )
    expect(card(page, "Bravo").locator('[data-role="agent"]')).to_have_text("Agent starting")
    expect(card(page, "Alpha").locator('[data-role="agent"]')).to_be_hidden()
    assert [session_of(api, t)["status"] for t in tasks] == ["completed", "starting", "queued", "queued"]
    shot(page, "board-agents-queue")

    narrow = open_board(owner, workflow)
    narrow.set_viewport_size({"width": 390, "height": 844})
    expect(agents_header(narrow)).to_be_visible()
    card(narrow, "Charlie").scroll_into_view_if_needed()  # the columns scroll sideways
    shot(narrow, "board-agents-narrow")


def test_the_settings_edit_the_session_limits_and_show_a_refused_value(
    board_server, open_page, open_board, axe, api, owner, workflow, agent_board
):
    page = open_page(owner, f"/workflows/{workflow.pk}/settings/")
    page.wait_for_load_state()  # the module script has run
    limits = page.get_by_role("region", name="Agent sessions")
    board_limit = limits.get_by_label("Agents at a time on this board")
    expect(board_limit).to_have_value("1")
    axe(page, "the step settings with the session limits")

    # A refused value: the server's message at the field, nothing saved
    board_limit.fill("-1")
    limits.get_by_role("button", name="Save board limits").click()
    expect(limits.locator("#max_parallel_sessions-error")).to_have_text(
        "Ensure this value is greater than or equal to 0."
    )
    expect(board_limit).to_have_attribute("aria-invalid", "true")
    shot(page, "settings-agent-limits-refused")
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").json()["max_parallel_sessions"] == 1
    axe(page, "the session limits with an error")

    board_limit.fill("3")
    refuse = "Start no session (the task's history says why)"
    limits.get_by_label("When a step starts an agent past a limit").select_option(label=refuse)
    limits.get_by_role("button", name="Save board limits").click()
    expect(limits.get_by_role("status").first).to_have_text("Saved.")
    expect(limits.locator("#max_parallel_sessions-error")).to_be_empty()
    saved = api.get(f"/api/v1/workflows/{workflow.pk}/").json()
    assert (saved["max_parallel_sessions"], saved["on_session_limit"]) == (3, "reject")

    workspace_limit = limits.get_by_label(f"Agents at a time in {workflow.workspace.name}")
    workspace_limit.fill("5")
    limits.get_by_role("button", name="Save workspace limit").click()
    expect(limits.get_by_role("status").nth(1)).to_have_text("Saved.")
    assert api.get(f"/api/v1/workspaces/{workflow.workspace_id}/").json()["max_concurrent_sessions"] == 5

    board_page = open_board(owner, workflow)
    expect(agents_header(board_page)).to_have_text("Agents: 0/3 running, 0 queued Workspace: 0/5 running, 0 queued")
    assert page.errors == [] and board_page.errors == []


def test_a_member_sees_the_workspace_limit_but_only_owners_change_it(open_page, workflow, agent_board):
    member = UserFactory(username="mike")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    page = open_page(member, f"/workflows/{workflow.pk}/settings/")
    limits = page.get_by_role("region", name="Agent sessions")
    expect(limits.get_by_label("Agents at a time on this board")).to_be_enabled()
    expect(limits.get_by_label(f"Agents at a time in {workflow.workspace.name}")).to_be_disabled()
    expect(limits.get_by_role("button", name="Save workspace limit")).to_be_disabled()
    expect(limits).to_contain_text("Only the workspace's owners change it.")


def test_a_viewer_has_no_session_settings_to_open(board_server, open_page, workflow, agent_board):
    viewer = UserFactory(username="vera")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    page = open_page(viewer, f"/workflows/{workflow.pk}/")
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    expect(agents_header(page)).to_have_text("Agents: 0/1 running, 0 queued Workspace: 0 running, 0 queued")
    assert page.goto(f"{board_server.url}/workflows/{workflow.pk}/settings/").status == 403
