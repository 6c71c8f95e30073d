import inspect
from pathlib import Path

import httpx
import pytest
from django.test import Client

from accounts.models import ApiToken
from boards.admission import task_create
from tests import factories
from tests.factories import MembershipFactory, WorkflowFactory
from tests.live.browser import SHARED_CHROMIUM
from tests.live.pages import off_loop
from tests.servers import Server, serving_test_database
from workflows.models import Role

AXE_SOURCE = Path(__file__).with_name("vendor").joinpath("axe-core", "axe.min.js")
SEVERE = ("serious", "critical")


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


@pytest.fixture(autouse=True)
def no_csp_violation(request):
    yield
    if "chromium" in request.fixturenames and SHARED_CHROMIUM.watched is not None:
        violations = SHARED_CHROMIUM.watched.csp_violations
        found, violations[:] = list(violations), []
        assert not found, f"Content Security Policy violations: {found}"


@pytest.fixture
def chromium():
    """Chromium, shared by consecutive browser tests (a fresh context for each page)."""
    return SHARED_CHROMIUM.get()


class Pages:
    """pages(user, path, width=1280) -> a page of the server, signed in as `user`, in a
    browser context of its own; `close()` closes every page opened so far."""

    def __init__(self, chromium, server):
        self.chromium, self.server, self.contexts, self.pages = chromium, server, [], []

    def __call__(self, user, path, width=1280, height=850, before_load=None):
        client = Client()
        client.force_login(user)
        context = self.chromium.new_context(viewport={"width": width, "height": height})
        session = client.cookies["sessionid"].value
        context.add_cookies([{"name": "sessionid", "value": session, "url": self.server.url}])
        self.contexts.append(context)
        page = context.new_page()
        self.pages.append(page)
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        if before_load is not None:
            before_load(page)
        page.goto(f"{self.server.url}{path}")
        return page

    def close(self):
        self.pages.clear()
        while self.contexts:
            self.contexts.pop().close()


@pytest.fixture
def open_page(transactional_db, chromium, board_server):
    """open_page(user, path, width=1280) -> a page of the server, signed in as `user` (`Pages`).

    Set up after the database fixture, so its pages close before the test's flush: a page
    still talking to the server while TRUNCATE runs can deadlock with it."""
    pages = Pages(chromium, board_server)
    yield pages
    pages.close()


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


class Journey:
    """A person's way through the pages, one chapter after another. A chapter is a function
    whose parameters name what it needs, as a test's name fixtures: `walk` gives it the
    owner, the browser, the server and its API, and a board of its own when it names one
    (`workflow`: "Delivery", in a workspace of its own the owner owns; its steps as `board`,
    `grouped` or `agent_board`), or the board of an earlier chapter passed on (`**world`,
    what `walk` returned). After the chapter, axe-core checks each of its pages as the
    chapter left it, and the pages are closed."""

    def __init__(self, **given):
        self.given = given

    def walk(self, chapter, **world):
        wanted = inspect.signature(chapter).parameters
        if "workflow" not in world and wanted.keys() & {"workflow", *BOARDS}:
            world["workflow"] = WorkflowFactory(name="Delivery")
            MembershipFactory(workspace=world["workflow"].workspace, user=self.given["owner"], role=Role.OWNER)
        for name, build in BOARDS.items():
            if name in wanted and name not in world:
                world[name] = build(world["workflow"])
        values = {**self.given, **world}
        pages = self.given["open_page"]
        try:
            chapter(**{name: values[name] for name in wanted})
            for page in pages.pages:  # every page as the chapter leaves it
                if not page.is_closed():
                    self.given["axe"](page, f"{page.url} after {chapter.__name__}")
        finally:
            pages.close()
        return world


def agent_board(workflow):
    """The board, which runs one agent session at a time."""
    workflow.max_parallel_sessions = 1
    workflow.save()
    return factories.board(workflow)


BOARDS = {"board": factories.board, "grouped": factories.development_board, "agent_board": agent_board}


@pytest.fixture
def journey(owner, open_page, open_board, axe, chromium, board_server, live_api, tmp_path):
    return Journey(
        owner=owner,
        open_page=open_page,
        open_board=open_board,
        axe=axe,
        chromium=chromium,
        board_server=board_server,
        api=live_api,
        live_api=live_api,
        make_task=make_task_of(owner),
        tmp_path=tmp_path,
    )


def make_task_of(owner):
    """make_task(step, title, **fields), as `owner` (in a thread of its own: `off_loop`)."""

    def make(step, title="Task", **kwargs):
        actor = kwargs.pop("actor", owner)
        return off_loop(task_create, workflow=step.workflow, step=step, actor=actor, title=title, **kwargs).task

    return make
