"""Browser journey of people talking about a task: a comment with a mention chosen from the
`@` autocomplete (a combobox driven by the keyboard), edited while a reply arrives live
(the edit keeps its text and focus), counted on the card, and the
activity feed of the board and of the workspace (reached from the board's header and the
home page) showing the comment and a move, live, on a phone in dark mode. Outcomes are
checked through the running server's API; axe-core checks every page."""

import pytest
from playwright.sync_api import expect

from boards.admission import task_move
from boards.models import Task
from tests.factories import MembershipFactory, UserFactory
from tests.live.pages import button, card, dialog, off_loop, read, server_api
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAYLOAD = "<script>window.pwned = 'script'</script> [a link](javascript:window.pwned='link')"


def comment_list(page):
    return dialog(page).locator('[data-role="history"] .comment')


def a_comment_with_a_mention_from_the_autocomplete_is_edited_and_counted(
    open_board, owner, workflow, board, make_task, board_server
):
    backlog = board[0]
    maria = UserFactory(username="maria", first_name="Maria", last_name="Lopez")
    MembershipFactory(workspace=workflow.workspace, user=maria, role=Role.MEMBER)
    task = make_task(backlog, "Write the launch post")  # pulled into In Progress
    page = open_board(owner, workflow)
    expect(card(page, task).locator('[data-role="comments"]')).to_be_hidden()

    card(page, task).click()
    box = dialog(page).get_by_role("combobox", name="Comment")
    box.fill("Looks good **now**, ")
    box.press_sequentially("@ma")
    suggestions = dialog(page).get_by_role("listbox", name="Members to mention")
    expect(box).to_have_attribute("aria-expanded", "true")
    expect(suggestions.get_by_role("option")).to_have_text(["@maria (Maria Lopez)"])
    expect(suggestions.get_by_role("option", name="@maria (Maria Lopez)")).to_have_attribute("aria-selected", "true")
    box.press("ArrowDown")  # one option: the arrows stay on it
    box.press("Enter")
    expect(box).to_have_attribute("aria-expanded", "false")
    expect(box).to_have_value("Looks good **now**, @maria ")
    box.press_sequentially("please review. ")
    box.press("End")
    page.keyboard.insert_text(PAYLOAD)
    button(page, "Comment").click()
    expect(dialog(page).get_by_role("status")).to_have_text("Comment added.")

    status, listed = read(page, f"tasks/{task.pk}/comments/")
    assert status == 200
    (comment,) = listed["results"]
    assert comment["mentions"] == ["maria"]
    assert comment["body"].startswith("Looks good **now**, @maria please review.")
    shown = comment_list(page)
    expect(shown).to_have_count(1)
    expect(shown.locator("strong", has_text="now")).to_be_visible()
    expect(shown).to_contain_text("<script>window.pwned = 'script'</script>")  # the descriptions' sanitizer
    assert shown.locator("script").count() == 0
    assert shown.locator('a[href^="javascript"]').count() == 0
    # The timeline: the history before it, the comment newest and last
    expect(dialog(page).locator('[data-role="history"] > li').last).to_have_class("event comment")
    expect(box).to_be_focused()

    # Its author edits it
    button(page, "Edit comment").click()
    editor = dialog(page).get_by_role("group", name="Edit the comment").get_by_label("Your comment")
    expect(editor).to_be_focused()
    editor.fill("Looks good, @maria:")
    # Maria's reply arrives live meanwhile: the edit keeps its text, its focus and its caret
    with server_api(board_server, maria) as api:
        assert api.post(f"/api/v1/tasks/{task.pk}/comments/", json={"body": "On it."}).status_code == 201
    expect(shown).to_have_count(2)
    expect(shown.last).to_contain_text("On it.")
    expect(editor).to_be_focused()
    page.keyboard.type(" ship it")
    expect(editor).to_have_value("Looks good, @maria: ship it")
    button(page, "Save comment").click()
    expect(dialog(page).get_by_role("status")).to_have_text("Comment saved.")
    expect(shown.first).to_contain_text("Looks good, @maria: ship it")
    expect(shown.first.get_by_text("(edited)")).to_be_visible()
    status, listed = read(page, f"tasks/{task.pk}/comments/")
    assert [c["edited_at"] is not None for c in listed["results"]] == [True, False]

    # The card says how many, in words
    page.keyboard.press("Escape")
    expect(card(page, task).get_by_text("2 comments", exact=True)).to_be_visible()
    assert page.evaluate("window.pwned") is None
    assert page.errors == []


def the_feed_shows_the_comment_and_a_move_live_on_a_phone_in_dark_mode(open_page, owner, workflow, board, board_server):
    done = board[-1]
    task = Task.objects.get(workflow=workflow)
    page = open_page(owner, f"/workflows/{workflow.pk}/", width=390, height=844)
    page.emulate_media(color_scheme="dark")
    page.get_by_role("link", name="Activity").click()
    expect(page.get_by_role("heading", name=f"Activity of {workflow.name}")).to_be_visible()
    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    feed = page.get_by_role("list", name="Activity, newest first")
    newest = feed.get_by_role("listitem").first
    expect(newest).to_contain_text("maria commented on Write the launch post")
    expect(feed.get_by_role("listitem").nth(1)).to_contain_text("olivia commented on Write the launch post")
    expect(feed.get_by_role("listitem").nth(1)).to_contain_text("Looks good, @maria: ship it")
    expect(feed).to_contain_text("pulled from Backlog into In Progress")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390

    # A move made elsewhere arrives on top, live
    with server_api(board_server, owner) as api:
        assert api.post(f"/api/v1/tasks/{task.pk}/move/", json={"step_id": str(done.pk)}).status_code == 200
    expect(newest).to_contain_text("olivia moved from In Progress to Done: Write the launch post")

    # Only the comments
    page.get_by_label("What").select_option("comment")
    expect(feed.get_by_role("listitem")).to_have_count(2)
    for item in feed.get_by_role("listitem").all():
        expect(item).to_contain_text("commented on")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.errors == []


def the_workspace_feed_is_reached_from_the_home_page(open_page, owner, workflow, board):
    task = Task.objects.get(workflow=workflow)
    off_loop(task_move, task=task, to_step=board[0], actor=owner, force=False)
    page = open_page(owner, "/")
    page.get_by_role("link", name=f"Activity of {workflow.workspace.name}").click()
    feed = page.get_by_role("list", name="Activity, newest first")
    # Back to Backlog, where In Progress, which has room, pulls it from at once
    expect(feed.get_by_role("listitem").nth(0)).to_contain_text("pulled from Backlog into In Progress")
    expect(feed.get_by_role("listitem").nth(1)).to_contain_text("moved from Done to Backlog")
    expect(feed).to_contain_text("commented on Write the launch post")
    assert page.errors == []


def test_people_talk_about_a_task_and_follow_the_activity(journey):
    """Comments with a mention from the autocomplete, edited and counted on the card; the board's
    feed live on a phone in dark mode; the workspace's feed from the home page."""
    world = journey.walk(a_comment_with_a_mention_from_the_autocomplete_is_edited_and_counted)
    journey.walk(the_feed_shows_the_comment_and_a_move_live_on_a_phone_in_dark_mode, **world)
    journey.walk(the_workspace_feed_is_reached_from_the_home_page, **world)
