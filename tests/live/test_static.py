"""Production mode: after collectstatic, with DEBUG off, uvicorn alone serves everything the
board needs (WhiteNoise, hashed names from CompressedManifestStaticFilesStorage)."""

import re
import subprocess
import sys

import pytest
from django.test import Client
from playwright.sync_api import expect

from tests.servers import ROOT, Server, serving_test_database

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def production_server(django_db_setup, tmp_path_factory):
    static_root = tmp_path_factory.mktemp("staticfiles")
    env = serving_test_database(DEBUG="0", STATIC_ROOT=str(static_root))
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
    )
    with Server(env) as server:
        yield server


def test_board_assets_are_served_hashed_with_debug_off(chromium, production_server, owner, workflow, board):
    client = Client()
    client.force_login(owner)
    context = chromium.new_context()
    session = client.cookies["sessionid"].value
    context.add_cookies([{"name": "sessionid", "value": session, "url": production_server.url}])
    page = context.new_page()
    static = []
    page.on("response", lambda r: "/static/" in r.url and static.append((r.url, r.status)))

    page.goto(f"{production_server.url}/workflows/{workflow.pk}/")

    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    assert page.evaluate("typeof Sortable") == "function"
    column_border = "getComputedStyle(document.querySelector('.column')).borderTopWidth"
    assert page.evaluate(column_border) == "4px"  # the stylesheet applied
    assert all(status == 200 for _, status in static), static
    # Every file by its hashed name, the ES modules too (their imports are rewritten).
    paths = sorted(url.split("/static/")[1] for url, _ in static)
    assert all(re.search(r"\.[0-9a-f]{12}\.(css|js|mjs)$", p) for p in paths), paths
    assert sorted(re.sub(r"\.[0-9a-f]{12}\.", ".", p) for p in paths) == [
        "board/api.js",
        "board/attachments.js",
        "board/board.css",
        "board/board.js",
        "board/checklist.js",
        "board/colors.js",
        "board/detail.js",
        "board/due.js",
        "board/filter.js",
        "board/focus.js",
        "board/input.js",
        "board/lanes.js",
        "board/limits.js",
        "board/live.js",
        "board/markdown.js",
        "board/mentions.js",
        "board/model.js",
        "board/people.js",
        "board/render.js",
        "board/runners.js",
        "board/timeline.js",
        "board/waiting.js",
        "board/writes.js",
        "site/bell.js",
        "site/site.css",
        "site/socket.js",
        "vendor/dompurify/purify.es.mjs",
        "vendor/marked/marked.esm.js",
        "vendor/sortablejs/Sortable.min.js",
    ]
    context.close()
