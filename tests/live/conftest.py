import os
from pathlib import Path

import httpx
import pytest
from django.test import Client

from accounts.models import ApiToken
from tests.servers import Server, serving_test_database

AXE_SOURCE = Path(__file__).with_name("vendor").joinpath("axe-core", "axe.min.js")
SEVERE = ("serious", "critical")

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def board_server(django_db_setup):
    """One uvicorn process serving the test database (DEBUG on: static files from the app)."""
    with Server(serving_test_database(DEBUG="1")) as server:
        yield server


@pytest.fixture
def live_api(board_server, owner):
    """The REST API of the server the browser talks to, as the owner."""
    _, key = ApiToken.issue(user=owner)
    with httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"}) as client:
        yield client


class WatchedBrowser:
    """Chromium, whose every page reports what the Content Security Policy refused: each
    test using it fails on such a violation in the console (`no_csp_violation`)."""

    def __init__(self, browser):
        self.browser = browser
        self.csp_violations = []

    def new_context(self, **options):
        context = self.browser.new_context(**options)
        context.on("console", self.note)
        return context

    def note(self, message):
        if "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)


@pytest.fixture(autouse=True)
def no_csp_violation(request):
    yield
    if "chromium" in request.fixturenames:
        violations = request.getfixturevalue("chromium").csp_violations
        found, violations[:] = list(violations), []
        assert not found, f"Content Security Policy violations: {found}"


@pytest.fixture(scope="module")
def chromium():
    """Per module: while it runs, the test thread holds Playwright's event loop."""
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the tests' own ORM calls are
    # plain synchronous code between its calls, so Django's async-context guard is a false alarm.
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        yield WatchedBrowser(browser)
        browser.close()


@pytest.fixture
def open_page(transactional_db, chromium, board_server):
    """open_page(user, path, width=1280) -> a page of the server, signed in as `user`.

    Set up after the database fixture, so its pages close before the test's flush: a page
    still talking to the server while TRUNCATE runs can deadlock with it."""
    contexts = []

    def open_(user, path, width=1280, height=850, before_load=None):
        client = Client()
        client.force_login(user)
        context = chromium.new_context(viewport={"width": width, "height": height})
        session = client.cookies["sessionid"].value
        context.add_cookies([{"name": "sessionid", "value": session, "url": board_server.url}])
        contexts.append(context)
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        if before_load is not None:
            before_load(page)
        page.goto(f"{board_server.url}{path}")
        return page

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture
def open_board(open_page):
    """open_board(user, workflow) -> a page showing the live board, signed in as `user`."""

    def open_(user, workflow, before_load=None):
        page = open_page(user, f"/workflows/{workflow.pk}/", width=1400, height=900, before_load=before_load)
        page.wait_for_selector('[data-role="live"][data-state="live"]')
        return page

    return open_


def axe_report(violations) -> str:
    """Each violation as its rule, impact and help, then the elements it was found on."""
    lines = []
    for violation in violations:
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']} <{violation['helpUrl']}>")
        for node in violation["nodes"]:
            why = " ".join(line.strip() for line in node["failureSummary"].splitlines())
            lines.append(f"    at {' '.join(map(str, node['target']))}: {why}")
    return "\n".join(lines)


@pytest.fixture(scope="session")
def axe():
    """axe(page, what) fails the test on any serious or critical accessibility violation.

    axe-core runs through page.evaluate, in the page's own context without a script element:
    the app's CSP (script-src 'self') refuses an inline <script> such as add_script_tag's."""
    source = AXE_SOURCE.read_text()

    def check(page, what: str) -> None:
        if not page.evaluate("() => typeof window.axe === 'object'"):
            page.evaluate(source)
        violations = page.evaluate("async () => (await window.axe.run(document)).violations")
        severe = [v for v in violations if v["impact"] in SEVERE]
        if severe:
            pytest.fail(f"axe: serious or critical violations on {what}:\n{axe_report(severe)}")

    return check
