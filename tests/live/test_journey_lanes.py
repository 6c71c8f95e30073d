"""Browser journeys of a board with swimlanes, in headless Chromium against a real uvicorn
server: an owner makes, renames, reorders and deletes lanes and sets lane and cell limits
in the step settings; people drag across lanes and steps (a full cell says so before the
drop, refuses it, and the card stays), move cards between lanes by keyboard, see a pull keep its task's lane, fold
a lane (the browser remembers it), filter without changing a count, and use the board at
390 px. Outcomes are checked through the running server's API; axe-core checks every page
(tests/live/conftest.py `Journey`)."""

import pytest
from playwright.sync_api import expect

from tests.live.pages import open_settings, saved, shot, step_form, version, without_feeder

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_owner_sets_up_lanes(journey):
    """Renames the first lane, adds a limited lane and an expedite lane, sets a cell limit,
    reorders and deletes a lane (its tasks go where the owner says); the board shows them."""
    journey.walk(lanes_are_made_limited_reordered_and_deleted_in_the_settings)


def test_people_work_a_board_with_lanes(journey):
    """A drag over a full cell says so before the drop, which is refused (the card stays); drags
    within a lane and across lanes move the card (a viewer sees it live); the keyboard moves a
    card between lanes; a pull keeps its task's lane and the next card says its cell is full; a
    folded lane stays folded and the filter hides cards without changing a count; the board at
    390 px."""
    journey.walk(a_drag_into_a_full_cell_is_refused_and_drags_within_and_across_lanes_move)
    journey.walk(the_keyboard_moves_a_card_to_the_lane_below_and_back)
    journey.walk(a_pull_keeps_the_task_in_its_lane_and_a_full_cell_is_named)
    journey.walk(a_folded_lane_stays_folded_and_the_filter_changes_no_count)
    journey.walk(three_lanes_with_an_expedite_lane_on_top_at_desktop_and_390_px)


# --- what the journeys say about lanes ---


def lanes_of(api, workflow) -> list[dict]:
    response = api.get(f"/api/v1/lanes/?workflow={workflow.pk}")
    assert response.status_code == 200
    return sorted(response.json()["results"], key=lambda lane: lane["position"])


def make_lanes(api, workflow, first, *others, **fields) -> dict:
    """Name the board's first lane `first` and add `others` (through the API, as a setup):
    the lanes by name. `fields` per name: {"Bugs": {"wip_limit": 3}}."""
    (lane,) = lanes_of(api, workflow)
    assert api.patch(f"/api/v1/lanes/{lane['id']}/", json={"name": first, **fields.get(first, {})}).status_code == 200
    for name in others:
        lane = {"workflow_id": str(workflow.pk), "name": name, **fields.get(name, {})}
        answer = api.post("/api/v1/lanes/", json=lane)
        assert answer.status_code == 201, answer.text
    return {lane["name"]: lane for lane in lanes_of(api, workflow)}


def set_cells(api, lane, limits: dict) -> None:
    cells = [{"step_id": str(step.pk), "wip_limit": limit} for step, limit in limits.items()]
    answer = api.put(f"/api/v1/lanes/{lane['id']}/cells/", json=cells)
    assert answer.status_code == 200, answer.text


def new_task(api, step, lane, title, **fields) -> dict:
    answer = api.post("/api/v1/tasks/", json={"step_id": str(step.pk), "lane_id": lane["id"], "title": title, **fields})
    assert answer.status_code == 201, answer.text
    return answer.json()


def task_now(api, task) -> dict:
    return api.get(f"/api/v1/tasks/{task['id']}/").json()


def place_of(api, task) -> tuple:
    now = task_now(api, task)
    return now["step_id"], now["lane_id"]


def cell(page, lane, step):
    return page.locator(f'.cell[data-lane-id="{lane["id"]}"][data-step-id="{step.pk}"]')


def cell_titles(page, lane, step):
    return cell(page, lane, step).locator(".card-title")


def card_of(page, task):
    return page.locator(f'.card[data-task-id="{task["id"]}"]')


def lane_row(page, lane):
    return page.locator(f'.lane[data-lane-id="{lane["id"]}"]')


def drag_to_cell(page, task, lane, step):
    """Drop the card at the bottom edge of the cell's list, below its last card."""
    cards = cell(page, lane, step).locator('[data-role="cards"]')
    box = cards.bounding_box()
    card_of(page, task).drag_to(cards, target_position={"x": box["width"] / 2, "y": box["height"] - 3})


def one_change(page, act):
    """Do `act` (a move) and wait until the page has its broadcast, the next version: the
    server has committed it."""
    before = int(version(page).get_attribute("data-version"))
    act()
    expect(version(page)).to_have_attribute("data-version", str(before + 1))


def settled(page, api, workflow):
    """The page shows the workflow's version as the API has it now."""
    board = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()
    expect(version(page)).to_have_attribute("data-version", str(board["workflow"]["version"]))


# --- chapters ---


def lanes_are_made_limited_reordered_and_deleted_in_the_settings(open_board, owner, workflow, board, api):
    backlog, doing, done = board
    without_feeder(doing)  # nothing is pulled: a task stays in Backlog
    page = open_settings(open_board, owner, workflow)
    section = page.get_by_role("region", name="Lanes")
    expect(section.locator('[data-role="lane-form"]')).to_have_count(1)
    (first,) = lanes_of(api, workflow)

    form = step_form(page, f"Lane {first['name']}")
    form.get_by_label("Name").fill("Features")
    saved(page, form.get_by_role("button", name="Save lane"))
    expect(page.locator("#settings-saved")).to_have_text("Lane saved.")

    adding = section.locator('[data-role="new-lane-form"]')
    adding.get_by_label("Name").fill("Bugs")
    adding.get_by_label("WIP limit").fill("3")
    saved(page, adding.get_by_role("button", name="Add lane"))
    expect(page.locator("#settings-saved")).to_have_text("Lane added.")
    adding = section.locator('[data-role="new-lane-form"]')
    adding.get_by_label("Name").fill("Urgent")
    adding.get_by_label("Expedite lane").check()
    saved(page, adding.get_by_role("button", name="Add lane"))

    bugs_form = step_form(page, "Lane Bugs")
    expect(bugs_form.get_by_label("WIP limit")).to_have_value("3")
    bugs_form.get_by_label("In Progress").fill("1")
    saved(page, bugs_form.get_by_role("button", name="Save lane"))
    expect(step_form(page, "Lane Bugs").get_by_label("In Progress")).to_have_value("1")

    lanes = {lane["name"]: lane for lane in lanes_of(api, workflow)}
    assert [lane["name"] for lane in lanes_of(api, workflow)] == ["Urgent", "Features", "Bugs"]  # expedite first
    assert (lanes["Bugs"]["wip_limit"], lanes["Urgent"]["is_expedite"], lanes["Features"]["is_expedite"]) == (
        3,
        True,
        False,
    )
    cells = api.get(f"/api/v1/lanes/{lanes['Bugs']['id']}/cells/").json()
    assert [(c["step_id"], c["wip_limit"]) for c in cells] == [(str(doing.pk), 1)]

    # The board: the expedite lane on top, then lane order; the cell's count where its limit is.
    board_page = open_board(owner, workflow)
    expect(board_page.locator('.lane [data-role="lane-name"]')).to_have_text(["Urgent", "Features", "Bugs"])
    expect(board_page.get_by_role("button", name="Bugs lane")).to_have_attribute("aria-expanded", "true")
    expect(lane_row(board_page, lanes["Bugs"]).locator('[data-role="lane-count"]')).to_have_text("0/3")
    expect(cell(board_page, lanes["Bugs"], doing).locator('[data-role="cell-count"]')).to_have_text("0/1")
    expect(cell(board_page, lanes["Features"], doing).locator('[data-role="cell-head"]')).to_be_hidden()

    # Reorder: Bugs before Features; then delete Features, its task going to Bugs.
    task = new_task(api, backlog, lanes["Features"], "Search")
    page.reload()
    saved(page, step_form(page, "Lane Bugs").get_by_role("button", name="Move lane Bugs earlier"))
    expect(page.locator("#settings-saved")).to_have_text("Lane moved.")
    assert [lane["name"] for lane in lanes_of(api, workflow)] == ["Urgent", "Bugs", "Features"]
    expect(board_page.locator('.lane [data-role="lane-name"]')).to_have_text(["Urgent", "Bugs", "Features"])

    features = step_form(page, "Lane Features")
    features.get_by_label("Move its tasks to").select_option(label="Bugs")
    page.once("dialog", lambda dialog: dialog.accept())
    saved(page, features.get_by_role("button", name="Delete lane"))
    expect(page.locator("#settings-saved")).to_have_text("Lane deleted.")
    assert [lane["name"] for lane in lanes_of(api, workflow)] == ["Urgent", "Bugs"]
    assert task_now(api, task)["lane_id"] == lanes["Bugs"]["id"]
    # The board follows live: two lanes left, the moved task in Bugs.
    expect(board_page.locator('.lane [data-role="lane-name"]')).to_have_text(["Urgent", "Bugs"])
    expect(cell_titles(board_page, lanes["Bugs"], backlog)).to_have_text(["Search"])
    assert page.errors == [] and board_page.errors == []


def a_drag_into_a_full_cell_is_refused_and_drags_within_and_across_lanes_move(open_board, owner, workflow, board, api):
    backlog, doing, done = board
    without_feeder(doing)  # nothing is pulled: the cards stay where they are put
    lanes = make_lanes(api, workflow, "Features", "Bugs")
    features, bugs = lanes["Features"], lanes["Bugs"]
    set_cells(api, bugs, {doing: 1})
    new_task(api, doing, bugs, "Crash")
    leak = new_task(api, backlog, bugs, "Leak")
    search = new_task(api, backlog, features, "Search")
    page, viewer = open_board(owner, workflow), open_board(owner, workflow)
    expect(cell(page, bugs, doing).locator('[data-role="cell-count"]')).to_have_text("1/1")

    card_of(page, leak).hover()  # held over the full cell, it says so before the drop
    page.mouse.down()
    box = cell(page, bugs, doing).locator('[data-role="cards"]').bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] - 3, steps=8)
    expect(cell(page, bugs, doing).locator('[data-role="drop-preview"]')).to_have_text("Full: Bugs in In Progress")
    expect(page.get_by_role("status", name="Move preview")).to_contain_text("A drop here will be refused.")
    page.mouse.up()

    alert = page.get_by_role("alert")
    expect(alert).to_contain_text('Lane "Bugs" is at its WIP limit in this step (1 of 1).')  # the refusal's words
    expect(cell_titles(page, bugs, backlog)).to_have_text(["Leak"])
    expect(cell_titles(page, bugs, doing)).to_have_text(["Crash"])
    assert place_of(api, leak) == (str(backlog.pk), bugs["id"])

    one_change(page, lambda: drag_to_cell(page, leak, bugs, done))  # within its lane
    expect(cell_titles(page, bugs, done)).to_have_text(["Leak"])
    expect(alert).to_be_hidden()
    one_change(page, lambda: drag_to_cell(page, search, bugs, done))  # across lanes and steps at once
    expect(cell_titles(page, bugs, done)).to_have_text(["Leak", "Search"])
    assert place_of(api, leak) == (str(done.pk), bugs["id"])
    assert place_of(api, search) == (str(done.pk), bugs["id"])
    for shown in (page, viewer):
        expect(cell_titles(shown, bugs, done)).to_have_text(["Leak", "Search"])
        expect(cell_titles(shown, features, backlog)).to_have_count(0)
        expect(shown.locator(f'.column[data-step-id="{done.pk}"] [data-role="wip-count"]')).to_have_text("2")
    assert page.errors == [] and viewer.errors == []


def the_keyboard_moves_a_card_to_the_lane_below_and_back(open_board, owner, workflow, board, api):
    backlog, doing, _ = board
    without_feeder(doing)
    lanes = make_lanes(api, workflow, "Features", "Bugs")
    features, bugs = lanes["Features"], lanes["Bugs"]
    search = new_task(api, backlog, features, "Search")
    leak = new_task(api, backlog, bugs, "Leak")
    page = open_board(owner, workflow)

    card_of(page, search).focus()
    page.keyboard.press("ArrowDown")  # the focus: past the cell's last card, to the lane below
    expect(card_of(page, leak)).to_be_focused()
    page.keyboard.press("ArrowUp")
    expect(card_of(page, search)).to_be_focused()

    # The card: past its cell's bottom, to the top of the lane below.
    one_change(page, lambda: page.keyboard.press("Shift+ArrowDown"))
    expect(cell_titles(page, bugs, backlog)).to_have_text(["Search", "Leak"])
    expect(card_of(page, search)).to_be_focused()
    assert place_of(api, search) == (str(backlog.pk), bugs["id"])

    one_change(page, lambda: page.keyboard.press("Shift+ArrowUp"))  # past its cell's top: to the end of the lane above
    expect(cell_titles(page, features, backlog)).to_have_text(["Search"])
    one_change(page, lambda: page.keyboard.press("Shift+ArrowRight"))  # along its lane to the next step
    expect(cell_titles(page, features, doing)).to_have_text(["Search"])
    expect(card_of(page, search)).to_be_focused()
    assert place_of(api, search) == (str(doing.pk), features["id"])
    assert place_of(api, leak) == (str(backlog.pk), bugs["id"])
    assert page.errors == []


def a_pull_keeps_the_task_in_its_lane_and_a_full_cell_is_named(open_board, owner, workflow, board, api):
    backlog, doing, done = board  # In Progress (limit 2) pulls from Backlog
    lanes = make_lanes(api, workflow, "Features", "Bugs")
    features, bugs = lanes["Features"], lanes["Bugs"]
    set_cells(api, bugs, {doing: 1})
    build = new_task(api, doing, features, "Build A")
    new_task(api, doing, features, "Build B")
    crash = new_task(api, backlog, bugs, "Fix crash")
    leak = new_task(api, backlog, bugs, "Fix leak")
    page = open_board(owner, workflow)
    expect(card_of(page, crash).locator('[data-role="waiting"]')).to_have_text("next for In Progress")

    one_change(page, lambda: drag_to_cell(page, build, features, done))  # the move and its pull: one change

    # The pull takes the first waiting card into In Progress, in its own lane.
    expect(cell_titles(page, bugs, doing)).to_have_text(["Fix crash"])
    expect(cell_titles(page, features, doing)).to_have_text(["Build B"])
    expect(cell(page, bugs, doing).locator('[data-role="cell-count"]')).to_have_text("1/1")
    assert place_of(api, crash) == (str(doing.pk), bugs["id"])
    assert place_of(api, leak) == (str(backlog.pk), bugs["id"])
    # Its lane's cell in In Progress is full now: the card says so.
    expect(card_of(page, leak).locator('[data-role="waiting"]')).to_contain_text("(Bugs cell full)")
    assert page.errors == []


def a_folded_lane_stays_folded_and_the_filter_changes_no_count(open_board, owner, workflow, board, api):
    backlog, doing, _ = board
    without_feeder(doing)
    lanes = make_lanes(api, workflow, "Features", "Bugs", Bugs={"wip_limit": 2})
    features, bugs = lanes["Features"], lanes["Bugs"]
    set_cells(api, bugs, {doing: 2})
    new_task(api, doing, bugs, "Fix crash")
    new_task(api, doing, bugs, "Fix leak")
    new_task(api, backlog, features, "Search")
    page = open_board(owner, workflow)
    toggle = page.get_by_role("button", name="Bugs lane")
    lane_count = lane_row(page, bugs).locator('[data-role="lane-count"]')
    expect(lane_count).to_have_text("2/2")

    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(cell(page, bugs, doing)).to_be_hidden()
    expect(lane_count).to_have_text("2/2")  # a folded lane still counts

    page.reload()  # this browser remembers the fold
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    toggle = page.get_by_role("button", name="Bugs lane")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(cell(page, bugs, doing)).to_be_hidden()
    expect(cell(page, features, backlog)).to_be_visible()
    toggle.click()
    expect(cell_titles(page, bugs, doing)).to_have_text(["Fix crash", "Fix leak"])

    counts = page.locator(".wip-count:visible")
    before = counts.all_text_contents()
    assert before == ["1", "2/2", "0", "0", "2/2", "2/2"]  # the columns; Features, Bugs (active steps) and its cell
    page.get_by_role("search", name="Filter cards").get_by_label("Filter").fill("crash")
    expect(page.locator(".card-title:visible")).to_have_text(["Fix crash"])
    expect(counts).to_have_text(before)
    assert page.errors == []


def three_lanes_with_an_expedite_lane_on_top_at_desktop_and_390_px(open_board, open_page, owner, workflow, board, api):
    backlog, doing, done = board  # In Progress pulls from Backlog
    assert api.patch(f"/api/v1/workflows/{workflow.pk}/", json={"expedite_limit": 1}).status_code == 200
    assert api.patch(f"/api/v1/steps/{doing.pk}/", json={"wip_limit": 3}).status_code == 200
    lanes = make_lanes(
        api, workflow, "Features", "Bugs", "Expedite", Bugs={"wip_limit": 3}, Expedite={"is_expedite": True}
    )
    set_cells(api, lanes["Bugs"], {doing: 1})
    new_task(api, doing, lanes["Expedite"], "Outage at checkout", priority="critical")
    new_task(api, doing, lanes["Features"], "Saved searches")
    new_task(api, doing, lanes["Bugs"], "Fix crash on login", priority="high")
    new_task(api, backlog, lanes["Features"], "Dark mode for reports", priority="low")
    new_task(api, backlog, lanes["Bugs"], "Fix leak in export")
    new_task(api, done, lanes["Features"], "Bulk import")
    page = open_board(owner, workflow)
    expect(page.locator('.lane [data-role="lane-name"]')).to_have_text(["Expedite", "Features", "Bugs"])
    expedite = lane_row(page, lanes["Expedite"])
    expect(expedite.locator('[data-role="lane-expedite"]')).to_be_visible()
    expect(expedite.locator(".card.is-expedite")).to_have_count(1)
    # Cells line up under their columns.
    for step in (backlog, doing, done):
        column_box = page.locator(f'.column[data-step-id="{step.pk}"]').bounding_box()
        for lane in lanes.values():
            assert cell(page, lane, step).bounding_box()["x"] == column_box["x"]
    settled(page, api, workflow)
    shot(page, "lanes-board")

    narrow = open_page(owner, f"/workflows/{workflow.pk}/", width=390, height=844)
    expect(narrow.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    header = narrow.get_by_role("button", name="Bugs lane").bounding_box()
    assert header["x"] >= 0 and header["x"] + header["width"] <= 390  # the lane's name is on screen
    assert narrow.locator("#board").evaluate("b => b.scrollWidth > b.clientWidth")  # the lanes scroll sideways
    assert narrow.evaluate("document.documentElement.scrollWidth") <= 390  # the page does not
    shot(narrow, "lanes-board-390")
    assert page.errors == [] and narrow.errors == []
