"""Browser journey of a person giving cards labels, due dates and checklists, in headless
Chromium against a real uvicorn server, on a phone-sized screen (390 px): the workspace's
labels made in the settings, a card labelled and given a due date in its dialog ("due in
3 days" on the card), a checklist filled, ticked and reordered from the keyboard ("1/2" on
the card), and the board filtered by label and by due date. Outcomes are checked through the
server's API; axe-core checks every page (tests/live/conftest.py `Journey`)."""

import datetime
import re

import pytest
from playwright.sync_api import expect

from boards.services import task_update
from tests.live.pages import button, card, dialog, field, off_loop

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = 390


def test_a_person_labels_dates_and_checks_off_cards(journey):
    world = journey.walk(labels_are_made_in_the_workspace_settings)
    journey.walk(a_card_gets_a_label_a_due_date_and_a_checklist, **world)
    journey.walk(the_board_filters_by_label_and_by_due_date, **world)


def labels_are_made_in_the_workspace_settings(open_page, owner, workflow, board, api):
    page = open_page(owner, f"/workflows/{workflow.pk}/settings/#labels", width=PHONE)
    labels = page.get_by_role("region", name=f"Labels of {workflow.workspace.name}")
    for name, colour in (("Bug", "Red"), ("Docs", "Blue")):
        labels.get_by_label("New label").fill(name)
        labels.get_by_label("Colour", exact=True).last.select_option(label=colour)
        labels.get_by_role("button", name="Add label").click()
        expect(labels.get_by_role("button", name=f"Delete label {name}")).to_be_visible()
        # The add reloaded the page: its forms are the script's once its load event has run
        # (a form sent before that would be submitted natively, and the typed name lost).
        page.wait_for_load_state()
    # A name already taken is refused in words, next to the form.
    labels.get_by_label("New label").fill("bug")
    labels.get_by_role("button", name="Add label").click()
    expect(labels.get_by_role("alert").filter(has_text="already exists")).to_be_visible()
    made = api.get(f"/api/v1/labels/?workspace={workflow.workspace_id}").json()["results"]
    assert [(label["name"], label["color"]) for label in made] == [("Bug", "red"), ("Docs", "blue")]


def labels_of(api, workflow) -> dict:
    """{name: id} of the workspace's labels."""
    made = api.get(f"/api/v1/labels/?workspace={workflow.workspace_id}").json()["results"]
    return {label["name"]: label["id"] for label in made}


def a_card_gets_a_label_a_due_date_and_a_checklist(open_page, owner, workflow, board, make_task, api):
    backlog, _, _ = board
    labels = labels_of(api, workflow)
    task = make_task(backlog, "Fix login")
    page = open_page(owner, f"/workflows/{workflow.pk}/", width=PHONE, height=844)
    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    card(page, task).click()
    expect(dialog(page)).to_be_visible()

    field(page, "Bug").check()
    in_three_days = datetime.datetime.now(datetime.UTC).date() + datetime.timedelta(days=3)  # the owner reads UTC
    field(page, "Date").fill(in_three_days.isoformat())
    button(page, "Save").click()
    expect(dialog(page).get_by_role("status").filter(has_text="Saved.")).to_be_visible()
    expect(card(page, task).locator(".label")).to_have_text(["Bug"])
    expect(card(page, task).locator('[data-role="due"]')).to_have_text("due in 3 days")
    saved = api.get(f"/api/v1/tasks/{task.pk}/").json()
    assert (saved["label_ids"], saved["due_at"][:10], saved["due_all_day"]) == (
        [labels["Bug"]],
        in_three_days.isoformat(),
        True,
    )

    for text in ("Write the test", "Fix the bug"):
        field(page, "New item").fill(text)
        button(page, "Add item").click()
        expect(field(page, text)).to_be_visible()
    field(page, "Write the test").check()
    expect(card(page, task).locator('[data-role="checklist"]')).to_contain_text("1/2")
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["checklist"] == {"done": 1, "total": 2}

    # Reordered from the keyboard: the focus stays with the item it moved.
    move_up = button(page, "Move “Fix the bug” up")
    move_up.focus()
    page.keyboard.press("Enter")
    expect(button(page, "Move “Fix the bug” down")).to_be_focused()
    items = api.get(f"/api/v1/tasks/{task.pk}/checklist/").json()["results"]
    assert [(item["text"], item["done"]) for item in items] == [("Fix the bug", False), ("Write the test", True)]
    page.keyboard.press("Escape")
    expect(dialog(page)).to_be_hidden()


def the_board_filters_by_label_and_by_due_date(open_page, owner, workflow, board, make_task, api):
    backlog, _, _ = board
    labels = labels_of(api, workflow)
    yesterday = datetime.datetime.now(datetime.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    yesterday -= datetime.timedelta(days=1)
    late = make_task(backlog, "Send the invoice")
    off_loop(task_update, task=late, actor=owner, due_at=yesterday, due_all_day=True, label_ids=[labels["Docs"]])
    page = open_page(owner, f"/workflows/{workflow.pk}/", width=PHONE, height=844)
    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    visible = page.locator(".card-title:visible")
    expect(visible).to_have_text(["Fix login", "Send the invoice"])
    # Overdue in words and by its icon and border, not by colour alone.
    expect(card(page, late).locator('[data-role="due"]')).to_have_text("overdue by 1 day")
    expect(card(page, late)).to_have_class(re.compile(r"\bis-overdue\b"))

    filter_bar = page.get_by_role("search", name="Filter cards")
    filter_bar.get_by_label("Label").select_option(label="Bug")
    expect(visible).to_have_text(["Fix login"])
    filter_bar.get_by_label("Label").select_option("")
    filter_bar.get_by_label("Due").select_option(label="Overdue")
    expect(visible).to_have_text(["Send the invoice"])
    filter_bar.get_by_label("Due").select_option(label="Due this week")
    expect(visible).to_have_text(["Fix login"])

    # A label renamed elsewhere reaches the open board live, on its cards and in the filter bar.
    api.patch(f"/api/v1/labels/{labels['Bug']}/", json={"name": "Defect"})
    filter_bar.get_by_label("Due").select_option("")
    expect(page.locator(".card .label")).to_have_text(["Defect", "Docs"])
    filter_bar.get_by_label("Label").select_option(label="Defect")
    expect(visible).to_have_text(["Fix login"])
