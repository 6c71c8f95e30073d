"""The step settings in headless Chromium (product.md §7): the structured events editor
(actions chosen from lists, written through the step API, never raw JSON) and the kind."""

import httpx
import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def step_of(board_server, user, step) -> dict:
    """The step as the running server's API answers it."""
    _, key = ApiToken.issue(user=user)
    response = httpx.get(f"{board_server.url}/api/v1/steps/{step.pk}/", headers={"Authorization": f"Token {key}"})
    assert response.status_code == 200
    return response.json()


def events_of(board_server, user, step) -> dict:
    return step_of(board_server, user, step)["events"]


def step_form(page, heading):
    return page.locator("form").filter(has=page.get_by_role("heading", name=heading))


def event_list(page, heading, label):
    return step_form(page, heading).get_by_role("group", name=label)


def open_settings(open_board, owner, workflow):
    page = open_board(owner, workflow)
    page.get_by_role("link", name="Step settings").click()
    page.wait_for_url(f"**/workflows/{workflow.pk}/settings/")
    page.wait_for_load_state()  # the module script has run: a form sent before would go natively
    return page


def test_an_owner_builds_step_events_from_lists(board_server, open_board, axe, owner, workflow, board):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    expect(page.locator("textarea")).to_have_count(0)
    form = step_form(page, "2. In Progress")
    on_enter = form.get_by_role("group", name="When a task enters")
    expect(on_enter.get_by_text("No actions.")).to_be_visible()

    on_enter.get_by_role("button", name="Add action").click()
    on_enter.get_by_label("Action").select_option(label="Start an agent")
    on_enter.get_by_role("button", name="Add action").click()
    second = on_enter.get_by_role("listitem").nth(1)
    expect(second.get_by_label("Target step")).to_be_hidden()
    second.get_by_label("Action").select_option(label="Move to step …")
    expect(second.get_by_label("Target step")).to_be_visible()
    expect(second.get_by_label("Target step").locator("option")).to_have_text(
        ["Choose a step", "Backlog", "Done"]  # never the step itself
    )
    form.get_by_role("button", name="Save").click()  # no target chosen: the server says so
    expect(form.locator('[data-error-for="events"]')).to_contain_text("move_to_step needs")
    assert events_of(board_server, owner, doing) == {"on_enter": [], "on_turn_complete": [], "on_exit": []}

    second.get_by_label("Target step").select_option(label="Done")
    on_turn = form.get_by_role("group", name="When an agent's turn completes")
    on_turn.get_by_role("button", name="Add action").click()
    expect(on_turn.get_by_label("Action").locator("option")).to_have_text(
        ["Move to next step", "Move to previous step", "Move to step …"]  # what the engine allows there
    )
    on_turn.get_by_label("Action").select_option(label="Move to next step")
    with page.expect_navigation():  # a saved form reloads the page
        form.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(form.locator('[data-error-for="events"]')).to_be_empty()
    assert events_of(board_server, owner, doing) == {
        "on_enter": [{"type": "auto_start_agent"}, {"type": "move_to_step", "config": {"step_id": str(done.pk)}}],
        "on_turn_complete": [{"type": "move_to_next"}],
        "on_exit": [],
    }

    # After the reload the server renders the saved actions as rows; remove one, add another.
    page.reload()
    page.wait_for_load_state()
    form = step_form(page, "2. In Progress")
    on_enter = form.get_by_role("group", name="When a task enters")
    actions = on_enter.get_by_label("Action")
    expect(actions.nth(0)).to_have_value("auto_start_agent")
    expect(actions.nth(1)).to_have_value("move_to_step")
    expect(on_enter.get_by_role("listitem").nth(1).get_by_label("Target step")).to_have_value(str(done.pk))
    on_enter.get_by_role("listitem").nth(0).get_by_role("button", name="Remove").click()
    on_exit = form.get_by_role("group", name="When a task leaves")
    on_exit.get_by_role("button", name="Add action").click()
    on_exit.get_by_label("Action").select_option(label="Move to previous step")
    with page.expect_navigation():  # a saved form reloads the page
        form.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(event_list(page, "2. In Progress", "When a task leaves").get_by_label("Action")).to_have_value(
        "move_to_previous"
    )
    assert events_of(board_server, owner, doing) == {
        "on_enter": [{"type": "move_to_step", "config": {"step_id": str(done.pk)}}],
        "on_turn_complete": [{"type": "move_to_next"}],
        "on_exit": [{"type": "move_to_previous"}],
    }
    assert "on_enter" not in page.locator("main").inner_text()  # no raw JSON anywhere
    axe(page, "the step settings after editing events")


def test_the_editor_works_by_keyboard_on_a_narrow_screen(board_server, open_board, axe, owner, workflow, board):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
    form = step_form(page, "3. Done")
    on_exit = form.get_by_role("group", name="When a task leaves")
    on_exit.get_by_role("button", name="Add action").focus()
    page.keyboard.press("Enter")
    action = on_exit.get_by_label("Action")
    expect(action).to_be_focused()
    page.keyboard.press("End")
    expect(action).to_have_value("move_to_step")
    page.keyboard.press("Tab")
    target = on_exit.get_by_label("Target step")
    expect(target).to_be_focused()
    page.keyboard.press("ArrowDown")
    expect(target.locator("option:checked")).to_have_text("Backlog")
    page.keyboard.press("Tab")
    expect(on_exit.get_by_role("button", name="Remove")).to_be_focused()
    page.keyboard.press("Tab")
    expect(on_exit.get_by_role("button", name="Add action")).to_be_focused()
    page.keyboard.press("Tab")
    expect(form.get_by_role("button", name="Save")).to_be_focused()
    with page.expect_navigation():  # a saved form reloads the page
        page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect(event_list(page, "3. Done", "When a task leaves").get_by_label("Action")).to_have_value("move_to_step")
    assert events_of(board_server, owner, done)["on_exit"] == [
        {"type": "move_to_step", "config": {"step_id": str(backlog.pk)}}
    ]
    axe(page, "the step settings at 390 px")

    form = step_form(page, "3. Done")
    on_exit = form.get_by_role("group", name="When a task leaves")
    on_exit.get_by_role("button", name="Remove").focus()
    page.keyboard.press("Enter")
    expect(on_exit.get_by_role("button", name="Add action")).to_be_focused()  # focus stays in the list
    expect(on_exit.get_by_text("No actions.")).to_be_visible()
    page.keyboard.press("Tab")
    with page.expect_navigation():  # a saved form reloads the page
        page.keyboard.press("Enter")
    page.wait_for_load_state()
    expect(event_list(page, "3. Done", "When a task leaves").get_by_text("No actions.")).to_be_visible()
    assert events_of(board_server, owner, done)["on_exit"] == []


def test_an_owner_sets_a_steps_kind_and_a_new_steps_kind(board_server, open_board, axe, owner, workflow, board):
    backlog, doing, done = board
    page = open_settings(open_board, owner, workflow)
    form = step_form(page, "2. In Progress")
    kind = form.get_by_label("Kind")
    expect(kind).to_have_value("active")
    expect(kind.locator("option")).to_have_text(["Backlog", "Active", "Done"])
    expect(step_form(page, "3. Done").get_by_label("Kind")).to_have_value("done")
    axe(page, "the step settings with kinds")

    kind.select_option(label="Done")
    with page.expect_navigation():  # a saved form reloads the page
        form.get_by_role("button", name="Save").click()
    page.wait_for_load_state()
    expect(step_form(page, "2. In Progress").get_by_label("Kind")).to_have_value("done")
    assert step_of(board_server, owner, doing)["kind"] == "done"
    assert step_of(board_server, owner, backlog)["kind"] == "backlog"  # the other forms are untouched

    new = page.locator('form[data-role="new-step-form"]')
    expect(new.get_by_label("Kind")).to_have_value("active")
    new.get_by_label("Name").fill("Shipped")
    new.get_by_label("Kind").select_option(label="Done")
    with page.expect_navigation():
        new.get_by_role("button", name="Add step").click()
    page.wait_for_load_state()
    added = workflow.steps.get(name="Shipped")
    assert step_of(board_server, owner, added)["kind"] == "done"
