"""What the browser journeys (test_journeys_*.py) say about the pages: where a column, a
card, the task dialog or a settings form is, how a card is dragged, and how the running
server's API is asked what happened."""

import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
from django.db import connection
from playwright.sync_api import expect

from accounts.models import ApiToken
from boards.models import Task
from workflows.models import WorkflowStep

FULL = 'Step "In Progress" is at its WIP limit (2 of 2).'


def off_loop(fn, *args, **kwargs):
    """Run a board write in a worker thread (its own connection; the test must be transactional).

    Playwright's sync API keeps an event loop in the test thread, and the broadcast after
    commit (async_to_sync) refuses to run in a thread with a running loop.
    """

    def call():
        try:
            return fn(*args, **kwargs)
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


def column(page, step):
    return page.locator(f'.column[data-step-id="{step.pk}"]')


def card(page, task):
    return page.locator(f'.card[data-task-id="{task.pk}"]')


def titles(page, step):
    return column(page, step).locator('[data-role="cards"] .card-title')


def drag(page, task, step):
    """Drop the card at the end of the step's list (its bottom edge, below the last card):
    the list's centre may fall on a card or between two, which depends on the layout."""
    cards = column(page, step).locator('[data-role="cards"]')
    box = cards.bounding_box()
    card(page, task).drag_to(cards, target_position={"x": box["width"] / 2, "y": box["height"] - 3})


def hold_over(page, task, step):
    """Pick the card up and hold it over the end of the step's list, as `drag` drops it; the
    drop is the caller's `page.mouse.up()`."""
    cards = column(page, step).locator('[data-role="cards"]')
    card(page, task).hover()
    page.mouse.down()
    box = cards.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 3, steps=8)


def without_feeder(step):
    """Make the step pull from no feeder, so the board is settled with cards waiting in
    Backlog beside its free capacity (built directly: a board layout, not a change to watch)."""
    WorkflowStep.objects.filter(pk=step.pk).update(pull_from_step=None)
    step.pull_from_step = None


def version(page):
    return page.locator("#board")


def step_of(task):
    return Task.objects.get(pk=task.pk).step_id


def server_api(board_server, user) -> httpx.Client:
    """Writes through the running server, so its viewers are told (unlike writes made here)."""
    _, key = ApiToken.issue(user=user)
    return httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"})


def read(page, path):
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


SHOTS = os.environ.get("KANDEV_SHOTS")


def shot(page, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(SHOTS) / f"{name}.png"), full_page=True)


AUTO_START = {"on_enter": [{"type": "auto_start_agent"}], "on_turn_complete": [], "on_exit": []}


def card_titled(page, title):
    return page.locator(".card").filter(has=page.locator(".card-title", has_text=title))


def agents_header(page):
    return page.locator('[data-role="agents"]')


def session_of(api, task) -> dict:
    (session,) = [s for s in api.get("/api/v1/sessions/").json()["results"] if s["task_id"] == str(task.pk)]
    return session


def report(api, session, type_):
    assert api.post(f"/api/v1/sessions/{session['id']}/events/", json={"type": type_}).is_success


def step_as_api(board_server, user, step) -> dict:
    """The step as the running server's API answers it."""
    _, key = ApiToken.issue(user=user)
    response = httpx.get(f"{board_server.url}/api/v1/steps/{step.pk}/", headers={"Authorization": f"Token {key}"})
    assert response.status_code == 200
    return response.json()


def events_of(board_server, user, step) -> dict:
    return step_as_api(board_server, user, step)["events"]


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


def groups_of(api, workflow) -> list[dict]:
    response = api.get(f"/api/v1/step-groups/?workflow={workflow.pk}")
    assert response.status_code == 200
    return response.json()["results"]


def saved(page, button):
    """Click a button whose form reloads the page when the server takes it."""
    with page.expect_navigation():
        button.click()
    page.wait_for_load_state()


def api_board(api, workflow) -> dict:
    response = api.get(f"/api/v1/workflows/{workflow.pk}/board/")
    assert response.status_code == 200
    return response.json()


def expected_labels(page, board: dict) -> dict:
    """Each card's waiting label: the API board's `waiting`, in the page's words."""
    return page.evaluate(
        """async (board) => {
            const base = document.querySelector('script[type="module"][src*="board/board"]').src;
            const { consumerOf } = await import(new URL("waiting.js", base));
            const { waitingText } = await import(new URL("render.js", base));
            return Object.fromEntries(board.steps.flatMap((step) => step.tasks.map(({ id, waiting }) => {
                if (!waiting) return [id, ""];
                const to = waiting.state === "queued" ? step : consumerOf(board.steps, step);
                return [id, waitingText({ ...waiting, step: to })];
            })));
        }""",
        board,
    )


def shown_labels(page, board: dict) -> dict:
    """Each card's waiting label as the page shows it, once the page is at the board's version."""
    expect(version(page)).to_have_attribute("data-version", str(board["workflow"]["version"]))
    return page.evaluate(
        """() => Object.fromEntries([...document.querySelectorAll('#board .card')].map((card) => {
            const label = card.querySelector('[data-role="waiting"]');
            return [card.dataset.taskId, label.hidden ? "" : label.textContent.trim()];
        }))"""
    )


def band(page, name):
    return page.get_by_role("group", name=name, exact=True)


def task_now(api, task) -> dict:
    response = api.get(f"/api/v1/tasks/{task.pk}/")
    assert response.status_code == 200
    return response.json()


def workspace_panel(page, name):
    return page.get_by_role("article", name=re.compile(re.escape(name)))


def listed(api, path):
    return api.get(path).json()["results"]


def boards_of(api, workspace_id):
    return {w["name"]: w for w in listed(api, f"/api/v1/workflows/?workspace={workspace_id}")}
