"""Browser journey: a person links two tasks in the task dialog, sees "Blocked by" on the
card, and moves the blocker to Done: the dependent is pulled, live, in the same change."""

import pytest
from playwright.sync_api import expect

from boards.admission import task_move
from boards.models import Task
from tests.live.pages import button, card, dialog, drag, field, history, off_loop, read, titles

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_member_links_two_tasks_and_sees_the_dependent_pulled_when_its_blocker_is_done(journey):
    journey.walk(link_a_blocker_and_finish_it)


def link_a_blocker_and_finish_it(open_board, owner, workflow, board, make_task, axe):
    backlog, doing, done = board
    blocker = make_task(doing, "Build the API")
    other = make_task(doing, "Tidy the docs")
    dependent = make_task(backlog, "Write the client")
    page = open_board(owner, workflow)

    # In the dialog of the dependent, the person names its blocker by title.
    card(page, dependent).click()
    expect(dialog(page)).to_be_visible()
    expect(dialog(page).locator('[data-role="no-blockers"]')).to_be_visible()
    field(page, "This task").select_option("blocked_by_task_id")
    field(page, "Task").fill("Build the API")
    button(page, "Add dependency").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Blocked by Build the API.")
    expect(dialog(page).locator('[data-role="blockers"] li')).to_have_text(["Build the API Remove"])
    expect(history(page).last).to_contain_text("A blocker was linked")
    assert read(page, f"tasks/{dependent.pk}/")[1]["blocked_by"] == [str(blocker.pk)]
    axe(page, "the task dialog of a task with a blocker")
    button(page, "Close").click()

    # The card says what blocks it; room opening in In Progress does not pull it.
    expect(card(page, dependent).locator('[data-role="blocked-by"]')).to_have_text("Blocked by Build the API")
    off_loop(task_move, task=other, to_step=done, actor=owner)
    expect(titles(page, doing)).to_have_text(["Build the API"])
    assert Task.objects.get(pk=dependent.pk).step_id == backlog.pk

    # The person drags the blocker to Done: the dependent is pulled in the same change, live.
    drag(page, blocker, done)
    expect(titles(page, doing)).to_have_text(["Write the client"])
    expect(card(page, dependent).locator('[data-role="blocked-by"]')).to_be_hidden()
    task = read(page, f"tasks/{dependent.pk}/")[1]
    assert (task["step_id"], task["blocked_by"]) == (str(doing.pk), [])

    # Its dialog lists the finished blocker, and removing the link is a button away.
    card(page, dependent).click()
    expect(dialog(page).locator('[data-role="blockers"] li')).to_have_text(["Build the API (done) Remove"])
    button(page, "Remove the dependency on Build the API").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Dependency removed.")
    expect(dialog(page).locator('[data-role="no-blockers"]')).to_be_visible()
    assert read(page, f"tasks/{dependent.pk}/links/")[1]["count"] == 0
