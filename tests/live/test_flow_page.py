"""The flow page in headless Chromium against a real uvicorn: when the board changes it
refetches its figures, at most once every five seconds however fast the board changes
(static/flow/coalesce.js). The page's time is Playwright's clock, moved by the test."""

from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

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
