"""The flow page in headless Chromium against a real uvicorn: when the board changes it
refetches its figures, at most once every five seconds however fast the board changes
(static/flow/coalesce.js; the page's time is Playwright's clock, moved by the test); and
it answers "when will it be done" on a history whose answer is exact."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.flow.factories import TaskEventFactory

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Counts the page's refreshes: each starts with one fetch of the board. An init script runs
# before the page's own and is not subject to its Content Security Policy.
COUNT_REFRESHES = """
window.__refreshes = 0;
const fetchOriginal = window.fetch;
window.fetch = (url, ...rest) => {
  if (String(url).includes("/board/?per_step=1")) window.__refreshes += 1;
  return fetchOriginal(url, ...rest);
};
"""
CHANGES = 20
SECONDS_BETWEEN = 1
REFRESH_SECONDS = 5


def test_a_burst_of_board_changes_refreshes_the_figures_a_bounded_number_of_times(
    open_page, owner, workflow, board, live_api
):
    backlog = board[0]
    sockets = []

    def before_load(page):
        # The page's clock stands still unless moved, an hour ahead: the tasks the test
        # makes (at the server's real time) are all in the window the page asks for.
        later = datetime.now(UTC) + timedelta(hours=1)
        page.clock.install(time=later)
        page.clock.pause_at(later + timedelta(seconds=1))
        page.add_init_script(COUNT_REFRESHES)
        page.on("websocket", lambda socket: sockets.append(socket))

    page = open_page(owner, f"/workflows/{workflow.pk}/flow/", before_load=before_load)
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    expect(page.locator('[data-chart="wip"] [data-role="summary"]')).to_contain_text("Backlog 0")
    assert page.evaluate("window.__refreshes") == 1
    (socket,) = sockets

    for n in range(CHANGES):  # one change a second, each delivered to the page
        with socket.expect_event("framereceived"):
            created = live_api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": f"Task {n}"})
            assert created.status_code == 201
        page.clock.run_for(SECONDS_BETWEEN * 1000)
    page.clock.run_for(REFRESH_SECONDS * 1000)  # the last change's refresh is due by then

    refreshes = page.evaluate("window.__refreshes") - 1
    assert 2 <= refreshes <= CHANGES * SECONDS_BETWEEN // REFRESH_SECONDS + 1, refreshes
    # The figures end with the board after its last change. A change that came while a
    # refresh was still fetching is refreshed once more, an interval after it.
    summary = page.locator('[data-chart="wip"] [data-role="summary"]')
    last = f"Backlog {CHANGES - 2}, In Progress 2 of 2"  # In Progress pulled two
    for _ in range(3):
        try:
            expect(summary).to_contain_text(last, timeout=10_000)
            break
        except AssertionError:
            page.clock.run_for(REFRESH_SECONDS * 1000)
    expect(summary).to_contain_text(last)
    assert page.errors == []


def test_the_flow_page_answers_when_it_will_be_done(open_page, owner, workflow, board, axe):
    """One task finished at noon on each of the 30 days before today: every simulated
    future finishes one a day, so the forecast is exact; each section is a named region."""
    backlog, doing, done = board
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    for day in range(1, 31):
        noon = today - timedelta(days=day) + timedelta(hours=12)
        task = uuid.uuid4()
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="created", to_step_id=doing.pk, at=noon - timedelta(hours=3)
        )
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="moved", from_step_id=doing.pk, to_step_id=done.pk, at=noon
        )

    page = open_page(owner, f"/workflows/{workflow.pk}/flow/")
    for name in (
        "Cumulative flow",
        "Work in progress per step",
        "When will it be done",
        "Service levels",
        "Limit advice",
    ):
        expect(page.get_by_role("region", name=name)).to_be_visible()
    cfd = page.get_by_role("region", name="Cumulative flow")
    expect(cfd.get_by_text("vertical distance between two lines is the work in progress")).to_be_visible()
    expect(cfd.locator('[data-role="summary"]')).to_contain_text("30 tasks finished; 0 in progress")

    when = page.get_by_role("region", name="When will it be done")
    in_ten = (today + timedelta(days=10)).date().isoformat()
    expect(when.locator('[data-role="summary"]')).to_contain_text(f"10 tasks done by {in_ten} (10 days) (50%)")
    when.get_by_role("radio", name="How many tasks by").check()
    when.get_by_label("Date").fill((today + timedelta(days=5)).date().isoformat())
    when.get_by_role("button", name="Forecast").click()
    expect(when.locator('[data-role="summary"]')).to_contain_text("at least 5 tasks (50%), 5 (85%), 5 (95%)")
    when.get_by_text("Table view").click()
    expect(when.locator('[data-role="table"]').get_by_role("row")).to_have_count(
        2
    )  # the head and one bar: 5 tasks in every future

    levels = page.get_by_role("region", name="Service levels")
    expect(levels.locator('[data-role="summary"]')).to_contain_text("standard: 85% within 1 day (30 tasks)")
    axe(page, "the flow page with a forecast")
    assert page.errors == []
