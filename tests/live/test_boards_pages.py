"""Boards and workspaces in the browser (product.md §7 "Boards"), driven as a person would:
by role and label. Outcomes are checked through the REST API of the same server."""

import re

import httpx
import pytest
from playwright.sync_api import expect

from accounts.models import ApiToken
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

BAD_BOARD = """\
type: kandev_workflow
version: 1
workflows:
  - name: Broken
    steps:
      - name: Doing
        position: 0
        wip_limit: -1
"""

GOOD_BOARD = """\
type: kandev_workflow
version: 1
workflows:
  - name: Imported
    steps:
      - name: Todo
        position: 0
        is_start_step: true
      - name: Doing
        position: 1
        wip_limit: 2
"""


@pytest.fixture
def api(board_server, owner):
    """The REST API of the server the browser talks to, as the owner."""
    _, key = ApiToken.issue(user=owner)
    with httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"}) as client:
        yield client


def workspace_panel(page, name):
    return page.get_by_role("article", name=re.compile(re.escape(name)))


def listed(api, path):
    return api.get(path).json()["results"]


def boards_of(api, workspace_id):
    return {w["name"]: w for w in listed(api, f"/api/v1/workflows/?workspace={workspace_id}")}


def test_owner_creates_a_workspace_and_a_board_from_a_template_then_imports(open_page, api, owner, tmp_path):
    page = open_page(owner, "/")
    page.get_by_role("button", name="New workspace").click()
    expect(page.get_by_role("alert").first).to_contain_text("Workspace name:")  # blank: refused
    page.get_by_label("Workspace name").fill("Platform team")
    page.get_by_role("button", name="New workspace").click()
    panel = workspace_panel(page, "Platform team")
    expect(panel).to_be_visible()
    [workspace] = [w for w in listed(api, "/api/v1/workspaces/") if w["name"] == "Platform team"]

    panel.get_by_label("Board name").fill("Delivery")
    template = panel.get_by_label("Template")
    names = [api_t["name"] for api_t in api.get("/api/v1/workflow-templates/").json()]
    assert {"Kanban", "PR Review"} <= set(names)
    expect(template.locator("option")).to_have_text(["Empty board (no steps)", *names])
    template.select_option(label="Kanban")
    panel.get_by_role("button", name="New board").click()
    expect(panel.get_by_role("link", name="Delivery")).to_be_visible()
    delivery = boards_of(api, workspace["id"])["Delivery"]
    steps = api.get(f"/api/v1/workflows/{delivery['id']}/board/").json()["steps"]
    assert [s["name"] for s in steps] == ["Backlog", "In Progress", "Review", "Done"]

    bad, good = tmp_path / "broken.yaml", tmp_path / "imported.yaml"
    bad.write_text(BAD_BOARD)
    good.write_text(GOOD_BOARD)
    panel.get_by_label("Board file (YAML or JSON)").set_input_files(bad)
    panel.get_by_role("button", name="Import").click()
    expect(panel.get_by_role("alert").last).to_contain_text("workflows[0].steps[0].wip_limit:")
    assert "Broken" not in boards_of(api, workspace["id"])  # all or nothing

    panel.get_by_label("Board file (YAML or JSON)").set_input_files(good)
    panel.get_by_role("button", name="Import").click()
    expect(panel.get_by_role("link", name="Imported")).to_be_visible()
    imported = boards_of(api, workspace["id"])["Imported"]
    steps = api.get(f"/api/v1/workflows/{imported['id']}/board/").json()["steps"]
    assert [(s["name"], s["wip_limit"]) for s in steps] == [("Todo", 0), ("Doing", 2)]
    assert page.errors == []


def test_owner_renames_exports_and_deletes_a_board(open_page, api, owner, workflow, board):
    page = open_page(owner, "/")
    item = page.get_by_role("listitem", name="Delivery")
    item.get_by_label("New name of Delivery").fill("Delivery 2025")
    item.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("link", name="Delivery 2025")).to_be_visible()
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").json()["name"] == "Delivery 2025"

    item = page.get_by_role("listitem", name="Delivery 2025")
    with page.expect_download() as download:
        item.get_by_role("link", name="Export").click()
    assert download.value.suggested_filename == "delivery-2025.yaml"
    assert "name: Delivery 2025" in open(download.value.path()).read()

    page.once("dialog", lambda dialog: dialog.dismiss())  # a second thought: nothing happens
    item.get_by_role("button", name="Delete").click()
    expect(item).to_be_visible()
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").status_code == 200
    page.once("dialog", lambda dialog: dialog.accept())
    item.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("No boards yet.")).to_be_visible()
    assert api.get(f"/api/v1/workflows/{workflow.pk}/").status_code == 404
    assert page.errors == []


def test_members_rename_but_only_owners_see_delete(open_page, workflow, board):
    member = UserFactory(username="mia")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    page = open_page(member, "/")
    item = page.get_by_role("listitem", name="Delivery")
    expect(item.get_by_role("button", name="Rename")).to_be_visible()
    expect(item.get_by_role("button", name="Delete")).to_have_count(0)


def test_archived_task_is_found_by_search_and_restored(open_page, api, owner, workflow, board):
    backlog, doing, done = board
    for n in range(2):  # a full In Progress: the restored task stays in Backlog, not pulled on
        api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": f"Busy {n}"})
    ids = {}
    for title in ("Fix login", "Write docs"):
        ids[title] = api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": title}).json()["id"]
        assert api.post(f"/api/v1/tasks/{ids[title]}/archive/").status_code == 200

    page = open_page(owner, f"/workflows/{workflow.pk}/")
    page.get_by_role("link", name="Archive").click()
    archived = page.get_by_role("list", name="Archived tasks").get_by_role("listitem")
    expect(archived).to_have_count(2)
    page.get_by_label("Search").fill("login")
    with page.expect_navigation():  # the results page's script is loaded before Restore is pressed
        page.get_by_role("button", name="Search").click()
    expect(archived).to_have_count(1)
    archived.get_by_role("button", name="Restore").click()
    expect(archived).to_have_text([re.compile("No archived task matches")])
    task = api.get(f"/api/v1/tasks/{ids['Fix login']}/").json()
    assert task["archived_at"] is None and task["step_id"] == str(backlog.pk)
    assert api.get(f"/api/v1/tasks/{ids['Write docs']}/").json()["archived_at"] is not None
    assert page.errors == []


def test_a_refused_restore_shows_the_conflict(open_page, api, owner, workflow, board):
    backlog, doing, done = board
    ids = [
        api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": f"Busy {n}"}).json()["id"] for n in range(2)
    ]
    assert api.post(f"/api/v1/tasks/{ids[0]}/archive/").status_code == 200
    api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": "Took its place"})

    page = open_page(owner, f"/workflows/{workflow.pk}/archive/")
    page.get_by_role("button", name="Restore").click()
    expect(page.get_by_role("alert")).to_have_text('Step "In Progress" is at its WIP limit (2 of 2).')
    assert api.get(f"/api/v1/tasks/{ids[0]}/").json()["archived_at"] is not None


def test_filter_hides_cards_but_the_header_counts_stay(open_page, api, owner, workflow, board):
    backlog, doing, done = board
    # In Progress first and full: the board settles, so Backlog keeps its cards only then.
    for title in ("Release", "Deploy"):
        api.post("/api/v1/tasks/", json={"step_id": str(doing.pk), "title": title, "priority": "high"})
    for title, priority in [("Fix login", "high"), ("Write docs", "low"), ("Fix logout", "low")]:
        api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": title, "priority": priority})
    page = open_page(owner, f"/workflows/{workflow.pk}/", width=390)
    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    counts = page.locator('[data-role="wip-count"]')
    expect(counts).to_have_text(["3", "2/2", "0"])
    filter_bar = page.get_by_role("search", name="Filter cards")

    filter_bar.get_by_label("Filter").fill("fix")
    expect(page.locator(".card-title:visible")).to_have_text(["Fix login", "Fix logout"])
    filter_bar.get_by_label("Priority").select_option("low")
    expect(page.locator(".card-title:visible")).to_have_text(["Fix logout"])
    expect(filter_bar.get_by_role("status")).to_have_text("1 of 5 cards shown")
    expect(counts).to_have_text(["3", "2/2", "0"])

    # A card that arrives live is filtered too, and counted.
    api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": "Fix the docs", "priority": "low"})
    api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": "Plan", "priority": "low"})
    expect(counts).to_have_text(["5", "2/2", "0"])
    expect(page.locator(".card-title:visible")).to_have_text(["Fix logout", "Fix the docs"])

    filter_bar.get_by_label("Filter").fill("")
    filter_bar.get_by_label("Priority").select_option("")
    expect(page.locator(".card-title:visible")).to_have_count(7)
    # At 390 px the columns scroll sideways instead of squeezing.
    board_box = page.locator("#board")
    assert board_box.evaluate("b => b.scrollWidth > b.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.errors == []
