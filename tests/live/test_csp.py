"""The Content Security Policy: no inline script anywhere, and every page works under it
(every browser test fails on a CSP violation in the console: conftest.no_csp_violation)."""

from django.test import Client
from playwright.sync_api import expect

from tests.factories import UserFactory


def policy(response) -> dict[str, list[str]]:
    header = response.headers["Content-Security-Policy"]
    return {d.split()[0]: d.split()[1:] for d in (part.strip() for part in header.split(";")) if d}


def test_pages_send_a_policy_without_inline_script(owner, workflow, board):
    client = Client()
    client.force_login(owner)
    for path in ("/", f"/workflows/{workflow.pk}/", "/accounts/login/", "/admin/login/"):
        directives = policy(client.get(path))
        assert directives["default-src"] == ["'self'"], path
        assert "'unsafe-inline'" not in directives.get("script-src", directives["default-src"]), path
        assert "'unsafe-inline'" not in directives["style-src"], path
        assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'none'"]


def test_the_browser_refuses_an_injected_inline_script(open_board, chromium, owner, workflow, board):
    page = open_board(owner, workflow)
    page.evaluate(
        "() => { const s = document.createElement('script');"
        " s.textContent = 'window.injected = true'; document.body.append(s); }"
    )
    assert page.evaluate("() => window.injected === undefined")
    assert any("script-src" in text for text in chromium.csp_violations)  # the watch sees it
    chromium.csp_violations.clear()


def test_the_api_docs_work_under_their_own_policy(chromium, board_server, transactional_db):
    user = UserFactory(username="reader")
    client = Client()
    client.force_login(user)
    context = chromium.new_context()
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": board_server.url}])
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{board_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("kandev API")
    expect(page.locator(".opblock-tag").first).to_be_visible()
    assert not errors
    context.close()
    directives = policy(client.get("/api/docs/"))
    assert "'unsafe-inline'" not in directives.get("script-src", directives["default-src"])
