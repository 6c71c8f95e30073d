"""The task detail dialog in headless Chromium, driven by role and label as a person would;
outcomes are read back through the REST API (product.md §7, "Task detail")."""

import re

import pytest
from playwright.sync_api import expect

from boards.admission import task_archive, task_create, task_move
from boards.services import task_block, task_update
from tests.factories import MembershipFactory, UserFactory
from tests.live.test_browser import FULL, card, off_loop
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAYLOAD = (
    "Ship **the brief** today.\n\n"
    "<script>window.pwned = 'script'</script>\n\n"
    '<img src="x" onerror="window.pwned = \'onerror\'">\n\n'
    "[a link](javascript:window.pwned='link')"
)


@pytest.fixture
def make_task(owner):
    def make(step, title, **kwargs):
        return off_loop(task_create, workflow=step.workflow, step=step, actor=owner, title=title, **kwargs).task

    return make


def api(page, path):
    """GET the REST API as the page's signed-in user."""
    response = page.request.get(f"{page.url.split('/workflows/')[0]}/api/v1/{path}")
    return response.status, (response.json() if response.ok else None)


def dialog(page):
    return page.get_by_role("dialog")


def field(page, label):
    return dialog(page).get_by_label(label, exact=True)


def button(page, name):
    return dialog(page).get_by_role("button", name=name, exact=True)


def history(page):
    return dialog(page).locator('[data-role="history"] li')


def test_a_card_opens_by_click_and_enter_and_saves_markdown_safely(open_board, owner, workflow, board, make_task):
    backlog, _, _ = board
    task = make_task(backlog, "Write the brief")
    page = open_board(owner, workflow)
    board_url = page.url

    card(page, task).click()
    expect(dialog(page)).to_be_visible()
    expect(page).to_have_url(f"{board_url}tasks/{task.pk}/")
    expect(field(page, "Title")).to_have_value("Write the brief")
    expect(field(page, "Title")).to_be_focused()
    field(page, "Title").fill("Write the product brief")
    field(page, "Description").fill(PAYLOAD)
    field(page, "Priority").select_option("high")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("status")).to_have_text("Saved.")

    status, saved = api(page, f"tasks/{task.pk}/")
    assert status == 200
    assert (saved["title"], saved["description"], saved["priority"]) == ("Write the product brief", PAYLOAD, "high")
    rendered = dialog(page).locator('[data-role="description-html"]')
    expect(rendered.locator("strong")).to_have_text("the brief")
    assert rendered.locator("script").count() == 0
    assert rendered.locator("[onerror]").count() == 0
    assert rendered.locator('a[href^="javascript"]').count() == 0
    # Raw HTML shows as the text it is.
    expect(rendered).to_contain_text("<script>window.pwned = 'script'</script>")
    expect(rendered).to_contain_text("a link")  # kept as text, without its javascript: URL
    assert page.evaluate("window.pwned") is None
    expect(card(page, task).locator(".card-title")).to_have_text("Write the product brief")

    page.keyboard.press("Escape")
    expect(dialog(page)).to_be_hidden()
    expect(page).to_have_url(board_url)
    expect(card(page, task)).to_be_focused()

    page.keyboard.press("Enter")
    expect(dialog(page)).to_be_visible()
    expect(page).to_have_url(f"{board_url}tasks/{task.pk}/")
    expect(field(page, "Priority")).to_have_value("high")
    button(page, "Close").click()
    expect(page).to_have_url(board_url)
    expect(card(page, task)).to_be_focused()
    assert page.evaluate("window.pwned") is None
    assert page.errors == []


def test_archive_restore_delete_and_the_history_from_a_direct_link(open_board, owner, workflow, board, make_task):
    backlog, doing, _ = board
    first = make_task(doing, "Review")
    make_task(doing, "Deploy")
    task = make_task(backlog, "Hotfix the login")  # after In Progress is full: it waits in Backlog
    off_loop(task_move, task=task, to_step=doing, actor=owner, force=True, reason="prod is down")
    page = open_board(owner, workflow)
    page.goto(f"{page.url}tasks/{task.pk}/")

    expect(dialog(page)).to_be_visible()
    expect(dialog(page).get_by_role("heading", name="Hotfix the login")).to_be_visible()
    expect(history(page)).to_have_count(2)
    expect(history(page).nth(0)).to_contain_text("Created in Backlog by olivia")
    forced = history(page).nth(1)
    expect(forced).to_contain_text("Forced admission")
    expect(forced).to_contain_text("Forced into In Progress over its WIP limit")
    expect(forced).to_contain_text("Why: prod is down")
    expect(forced).to_have_class(re.compile("is-forced"))

    button(page, "Archive").click()
    expect(button(page, "Restore")).to_be_focused()
    expect(button(page, "Archive")).to_be_hidden()
    assert api(page, f"tasks/{task.pk}/")[1]["archived_at"] is not None
    expect(card(page, task)).to_have_count(0)
    expect(history(page).nth(2)).to_contain_text("Archived from In Progress")

    # In Progress is full again (2 of 2): the server refuses the restore and says why.
    button(page, "Restore").click()
    expect(dialog(page).get_by_role("alert")).to_have_text(FULL)
    assert api(page, f"tasks/{task.pk}/")[1]["archived_at"] is not None

    off_loop(task_archive, task=first, actor=owner)
    button(page, "Restore").click()
    expect(button(page, "Archive")).to_be_focused()
    expect(dialog(page).get_by_role("alert")).to_be_hidden()
    restored = api(page, f"tasks/{task.pk}/")[1]
    assert restored["archived_at"] is None and restored["step_id"] == str(doing.pk)
    expect(history(page).nth(3)).to_contain_text("Restored to In Progress by olivia")
    expect(card(page, task)).to_have_count(1)

    button(page, "Delete").click()
    expect(dialog(page).get_by_text("Delete this task for good?")).to_be_visible()
    button(page, "Keep it").click()
    expect(button(page, "Delete")).to_be_focused()
    assert api(page, f"tasks/{task.pk}/")[0] == 200
    button(page, "Delete").click()
    button(page, "Delete for good").click()
    expect(dialog(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(rf"/workflows/{workflow.pk}/$"))
    assert api(page, f"tasks/{task.pk}/")[0] == 404
    expect(card(page, task)).to_have_count(0)
    assert page.errors == []


def test_live_changes_show_in_the_open_dialog_unless_the_field_is_being_edited(
    open_board, owner, workflow, board, make_task
):
    backlog, _, _ = board
    task = make_task(backlog, "Draft")
    page = open_board(owner, workflow)
    card(page, task).click()
    expect(field(page, "Title")).to_have_value("Draft")

    off_loop(task_update, task=task, actor=owner, title="Draft two", description="*new*")
    expect(field(page, "Title")).to_have_value("Draft two")
    expect(dialog(page).locator('[data-role="description-html"] em')).to_have_text("new")

    field(page, "Title").fill("My title")
    off_loop(task_update, task=task, actor=owner, title="Their title")
    expect(dialog(page).get_by_role("heading", name="Their title")).to_be_visible()
    expect(dialog(page).get_by_text("Someone changed this task while you were editing it.")).to_be_visible()
    expect(field(page, "Title")).to_have_value("My title")
    button(page, "Show their version").click()
    expect(field(page, "Title")).to_have_value("Their title")
    assert page.errors == []


def test_focus_stays_in_the_dialog_which_fills_a_narrow_screen(open_board, owner, workflow, board, make_task):
    backlog, _, _ = board
    task = make_task(backlog, "On the phone")
    page = open_board(owner, workflow)
    page.set_viewport_size({"width": 390, "height": 844})
    card(page, task).focus()
    page.keyboard.press("Enter")
    expect(dialog(page)).to_be_visible()
    box = dialog(page).bounding_box()
    assert (box["x"], box["y"], box["width"], box["height"]) == (0, 0, 390, 844)
    inside = "document.getElementById('task-dialog').contains(document.activeElement)"
    for key in ["Tab"] * 12 + ["Shift+Tab"] * 12:
        page.keyboard.press(key)
        assert page.evaluate(inside), key
    page.keyboard.press("Escape")
    expect(card(page, task)).to_be_focused()


def test_viewers_read_the_task_without_write_controls_and_the_server_refuses_their_writes(
    open_board, owner, workflow, board, make_task
):
    backlog, doing, _ = board
    for title in ("Busy", "Also busy"):  # a full In Progress: the task stays in Backlog, one history entry
        make_task(doing, title)
    task = make_task(backlog, "Read only", description="Some **notes**")
    viewer = UserFactory(username="vic")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    page = open_board(viewer, workflow)

    card(page, task).click()
    expect(dialog(page)).to_be_visible()
    expect(dialog(page).get_by_role("heading", name="Read only")).to_be_visible()
    expect(dialog(page).locator('[data-role="description-html"] strong')).to_have_text("notes")
    expect(dialog(page).get_by_text("Priority: medium")).to_be_visible()
    expect(history(page)).to_have_count(1)
    for label in ("Title", "Description", "Priority"):
        expect(dialog(page).get_by_label(label, exact=True)).to_have_count(0)
    for name in ("Save", "Archive", "Restore", "Delete"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)

    # A write forced from the viewer's own session, CSRF token and all, is refused.
    status = page.evaluate(
        """async (id) => {
            const token = document.cookie.match(/csrftoken=([^;]+)/)[1];
            const response = await fetch(`/api/v1/tasks/${id}/`, {
                method: "PATCH", credentials: "same-origin",
                headers: {"Content-Type": "application/json", "X-CSRFToken": token},
                body: JSON.stringify({title: "Taken over"}),
            });
            return response.status;
        }""",
        str(task.pk),
    )
    assert status == 403
    assert api(page, f"tasks/{task.pk}/")[1]["title"] == "Read only"
    page.keyboard.press("Escape")
    expect(card(page, task)).to_be_focused()


def test_block_and_unblock_with_a_reason_from_the_dialog(open_board, owner, workflow, board, make_task, axe):
    _, _, done = board
    task = make_task(done, "Deploy the release")
    other = make_task(done, "Write the notes")
    page = open_board(owner, workflow)
    card(page, task).click()
    expect(dialog(page)).to_be_visible()

    # No reason: refused, and the field says why.
    button(page, "Block").click()
    expect(dialog(page).get_by_role("alert")).to_be_visible()
    expect(dialog(page).locator('[data-error-for="reason"]')).not_to_be_empty()
    expect(field(page, "Reason")).to_have_attribute("aria-invalid", "true")
    assert api(page, f"tasks/{task.pk}/")[1]["blocked_reason"] == ""

    field(page, "Reason").fill("waiting on ops")
    button(page, "Block").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Blocked.")
    assert api(page, f"tasks/{task.pk}/")[1]["blocked_reason"] == "waiting on ops"
    expect(dialog(page).locator('[data-role="blocked-note"]')).to_have_text("Blocked: waiting on ops")
    expect(card(page, task).locator('[data-role="blocked"]')).to_have_text("Blocked: waiting on ops")
    expect(history(page).last).to_contain_text("Blocked")
    expect(history(page).last).to_contain_text("Why: waiting on ops")
    axe(page, "the task dialog of a blocked task")

    button(page, "Unblock").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Unblocked.")
    assert api(page, f"tasks/{task.pk}/")[1]["blocked_reason"] == ""
    expect(button(page, "Unblock")).to_be_hidden()
    expect(card(page, task).locator('[data-role="blocked"]')).to_be_hidden()
    expect(history(page).last).to_contain_text("Unblocked")

    # The filter bar's "Blocked" shows blocked cards only, also one blocked by someone else.
    button(page, "Close").click()
    off_loop(task_block, task=other, actor=owner, reason="needs a decision")
    expect(card(page, other).locator('[data-role="blocked"]')).to_have_text("Blocked: needs a decision")
    page.get_by_label("Blocked", exact=True).select_option("blocked")
    expect(card(page, task)).to_be_hidden()
    expect(card(page, other)).to_be_visible()
    page.get_by_label("Blocked", exact=True).select_option("unblocked")
    expect(card(page, task)).to_be_visible()
    expect(card(page, other)).to_be_hidden()
    assert page.errors == []
