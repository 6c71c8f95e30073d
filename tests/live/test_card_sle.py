"""A card in an active step shows its age against its class's service level in words, in
headless Chromium against a real server: "Day 6 of 9", and past it "Day 11 of 9: past its
service level", marked by its icon and border too (not by colour alone)."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from boards.models import Task
from flow.models import ServiceLevel
from tests.live.conftest import make_task_of
from tests.live.pages import off_loop

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def started(task, ago):
    Task.objects.filter(pk=task.pk).update(started_at=timezone.now() - ago)


def test_cards_show_their_day_of_the_service_level(open_page, owner, workflow, board, axe):
    backlog, doing, done = board
    make_task = make_task_of(owner)
    off_loop(ServiceLevel.objects.create, workflow=workflow, class_of_service="standard", days=9)
    within, past = make_task(doing, "Within"), make_task(doing, "Past")
    make_task(backlog, "Waiting")
    off_loop(started, within, timedelta(days=5, hours=12))
    off_loop(started, past, timedelta(days=10, hours=2))
    page = open_page(owner, f"/workflows/{workflow.pk}/")
    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")

    def card(title):
        return page.get_by_role("listitem").filter(has=page.get_by_text(title, exact=True))

    expect(card("Within").get_by_text("Day 6 of 9", exact=True)).to_be_visible()
    expect(card("Past").get_by_text("Day 11 of 9: past its service level", exact=True)).to_be_visible()
    expect(card("Past")).to_have_class(re.compile(r"\bis-past-sle\b"))
    expect(card("Within")).not_to_have_class(re.compile(r"\bis-past-sle\b"))
    expect(card("Waiting").get_by_text(re.compile(r"^Day \d+ of"))).to_have_count(0)  # a backlog card has no cycle yet
    axe(page, "the board with cards against their service level")
    assert page.errors == []
