"""The flow page's configuration history and service levels, in headless Chromium against a
real server: an owner lowers a limit, reads the change on the flow page, sets a service
level and sees it reported; a task's detail says when it will likely start and be done.
Outcomes are checked through the running server's API; axe-core checks each page."""

import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from boards.admission import task_move
from boards.structure import lane_create
from tests.flow.factories import TaskEventFactory
from tests.live.pages import card_titled, dialog

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_reads_the_configuration_history_and_sets_a_service_level(journey):
    world = journey.walk(the_flow_page_lists_a_limit_change_and_takes_an_owner_s_service_level)
    journey.walk(a_waiting_card_s_detail_says_when_it_will_likely_start_and_be_done, **world)


def the_flow_page_lists_a_limit_change_and_takes_an_owner_s_service_level(open_page, owner, workflow, board, live_api):
    backlog, doing, done = board
    changed = live_api.patch(f"/api/v1/steps/{doing.pk}/", json={"wip_limit": 3})
    assert changed.status_code == 200

    page = open_page(owner, f"/workflows/{workflow.pk}/flow/")
    history = page.get_by_role("region", name="Configuration history")
    expect(history.get_by_text("every change of a limit or flow rule in the window", exact=False)).to_be_visible()
    expect(history.locator('[data-role="summary"]')).to_have_text("1 change in this window.")
    row = history.get_by_role("row").filter(has_text="WIP limit")
    for cell in ("olivia", "step In Progress", "WIP limit", "2", "3"):
        expect(row.get_by_role("cell", name=cell, exact=True)).to_be_visible()

    levels = page.get_by_role("region", name="Service levels")
    levels.get_by_label("Class of service").select_option("standard")
    levels.get_by_label("85% finish within (days; empty: from the history)").fill("9")
    levels.get_by_role("button", name="Set service level").click()
    expect(levels.get_by_role("status")).to_have_text("Service level set: 85% of standard tasks within 9 days.")
    expect(levels.locator('[data-role="summary"]')).to_contain_text("standard: 85% within 9 days (set by an owner)")
    sles = live_api.get(f"/api/v1/workflows/{workflow.pk}/flow/sle/").json()["sles"]
    standard = next(s for s in sles if s["class_of_service"] == "standard")
    assert (standard["days"], standard["set_by"]) == (9, "owner")
    assert page.errors == []


def a_waiting_card_s_detail_says_when_it_will_likely_start_and_be_done(open_board, owner, workflow, board, make_task):
    """One task finished each of the 30 days before today, 46 hours after it started (2 days,
    rounded up): the second card waiting behind a full In Progress starts in two days and
    is done two days later."""
    backlog, doing, done = board
    now = datetime.now(UTC)
    for day in range(30):
        task = uuid.uuid4()
        finished = now - timedelta(days=day, hours=1)
        started = finished - timedelta(days=2) + timedelta(hours=2)
        TaskEventFactory(workflow=workflow, task_id=task, kind="created", to_step_id=doing.pk, at=started)
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="moved", from_step_id=doing.pk, to_step_id=done.pk, at=finished
        )
    for title in ("busy 1", "busy 2", "busy 3"):  # In Progress is full at its limit of 3
        make_task(doing, title)
    for title in ("next", "after it"):
        make_task(backlog, title)

    page = open_board(owner, workflow)
    card_titled(page, "after it").click()
    today = now.date()
    starts, ends = (today + timedelta(days=2)).isoformat(), (today + timedelta(days=4)).isoformat()
    expect(dialog(page)).to_contain_text(f"Forecast: 85% likely to start by {starts} and be done by {ends}")
    assert page.errors == []


def test_the_flow_page_splits_its_charts_by_lane(journey):
    journey.walk(the_lane_select_redraws_the_charts_for_one_lane)


def the_lane_select_redraws_the_charts_for_one_lane(open_page, owner, workflow, board, make_task):
    """One task finished in the first lane, two in Team B: the charts count three, then two."""
    backlog, doing, done = board
    team_b = lane_create(workflow=workflow, actor=owner, name="Team B")
    for title, lane in (("first", None), ("b one", team_b.pk), ("b two", team_b.pk)):
        task_move(task=make_task(doing, title, lane_id=lane), to_step=done, actor=owner)

    page = open_page(owner, f"/workflows/{workflow.pk}/flow/")
    throughput = page.get_by_role("region", name="Throughput")
    summary = throughput.locator('[data-role="summary"]')
    expect(summary).to_contain_text("3 tasks finished in")
    cycle = page.get_by_role("region", name="Cycle time").locator('[data-role="summary"]')
    expect(cycle).to_contain_text("Per lane: Default 85% within")
    expect(cycle).to_contain_text("Team B 85% within")

    page.get_by_label("Lane", exact=True).select_option(label="Team B")
    expect(summary).to_contain_text("2 tasks finished in")
    expect(throughput.get_by_role("link", name="Download CSV")).to_have_attribute(
        "href", re.compile(f"lane={team_b.pk}")
    )
    assert page.errors == []
