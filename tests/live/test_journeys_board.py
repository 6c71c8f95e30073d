"""Browser journeys of the people who work a board, in headless Chromium against a real
uvicorn server: moving cards, reading and filling the columns, the task dialog, watching
live, the board keeping up with the server, the limits on the board and in the dialog,
agents. Each journey walks chapters (tests/live/conftest.py `Journey`), drives the pages
by role and label as a person would, checks the outcomes through the running server's API
(or its database), and runs axe-core on the pages it visits."""

import json
import re

import pytest
from playwright.sync_api import expect

from boards.admission import task_archive, task_move
from boards.models import Task
from boards.services import task_block, task_update
from boards.structure import step_update
from tests.boards.test_admission_cases import TABLE as ADMISSION_TABLE
from tests.boards.test_waiting_cases import TABLE
from tests.factories import MembershipFactory, UserFactory
from tests.live.pages import (
    AUTO_START,
    FULL,
    agents_header,
    api_board,
    band,
    button,
    card,
    card_titled,
    column,
    dialog,
    drag,
    expected_labels,
    field,
    history,
    hold_over,
    off_loop,
    read,
    report,
    server_api,
    session_of,
    shot,
    shown_labels,
    step_of,
    task_now,
    titles,
    version,
    without_feeder,
)
from tests.servers import eventually
from workflows.models import Role, WorkflowStep

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAYLOAD = (
    "Ship **the brief** today.\n\n"
    "<script>window.pwned = 'script'</script>\n\n"
    '<img src="x" onerror="window.pwned = \'onerror\'">\n\n'
    "[a link](javascript:window.pwned='link')"
)

# Each case's board through the page's modules (waiting.js, render.js, detail.js), as the board loads them:
# the card's label and the task detail's waiting text.
SHOWN = """async (table) => {
    const base = document.querySelector('script[type="module"][src*="board/board"]').src;
    const { boardWaiting } = await import(new URL("waiting.js", base));
    const { waitingText } = await import(new URL("render.js", base));
    const { detailWaitingText } = await import(new URL("detail.js", base));
    const ranks = JSON.parse(document.getElementById("priority-ranks").textContent);
    return table.cases.map((board) => {
        const steps = board.steps.map((step) => ({ ...table.defaults.step, ...step }));
        const tasks = board.tasks.map((task) => ({ ...table.defaults.task, ...task }));
        const waiting = boardWaiting(steps, tasks, ranks);
        return Object.fromEntries(tasks.map((task) => {
            const why = waiting.get(task.id);
            if (!why) return [task.id, null];
            const detail = detailWaitingText({ ...why, held_by: [], skipped_because: null });
            return [task.id, { state: why.state, position: why.position, label: waitingText(why), detail }];
        }));
    });
}"""


# Each case's move through the page's modules (limits.js, render.js), as the board loads them:
# the verdict, the first full limit it names and what the drop preview says.
JUDGED = """async (table) => {
    const base = document.querySelector('script[type="module"][src*="board/board"]').src;
    const { judgeMove } = await import(new URL("limits.js", base));
    const { previewText } = await import(new URL("render.js", base));
    const given = table.defaults;
    return table.cases.map((board) => {
        const tasks = board.tasks.map((task) => ({ ...given.task, ...task }));
        const judged = judgeMove({
            expedite_limit: board.expedite_limit ?? given.expedite_limit,
            steps: board.steps.map((step) => ({ ...given.step, ...step })),
            groups: board.groups ?? [],
            lanes: (board.lanes ?? given.lanes).map((lane) => ({ ...given.lane, ...lane })),
            cells: board.cells ?? [],
            // a case names a person by their username
            people: (board.people ?? []).map((person) => ({ ...given.person, username: person.id, ...person })),
            tasks,
        }, tasks.find((task) => task.id === board.move.task), board.move);
        return { ...judged, preview: previewText(judged) };
    });
}"""


def test_a_member_moves_cards(journey):
    """Drags a card over a full step, which says so before the drop (the drop is refused, the card stays),
    moves one there by keyboard (a second press sends it), loses the network (rolled back), drags one
    that is taken (the pull follows), drags into a full queue-mode step (it queues), drops a card
    while a colleague's change arrives (the drop holds), moves by keyboard, reorders through a
    rebalance."""
    journey.walk(a_drag_over_a_full_step_shows_the_refusal_before_the_drop)
    journey.walk(a_keyboard_move_into_a_full_step_is_previewed_and_takes_a_second_press)
    journey.walk(network_error_rolls_back_with_its_own_message)
    journey.walk(accepted_drag_moves_the_card_and_the_pull_follows)
    journey.walk(drag_into_a_full_queue_mode_step_lands_in_its_queue)
    journey.walk(a_change_arriving_during_a_drag_does_not_lose_the_drop)
    journey.walk(keyboard_move_between_and_within_columns)
    journey.walk(reorders_show_the_mover_and_a_viewer_the_servers_order_through_a_rebalance)


def test_a_member_reads_and_fills_the_columns(journey):
    """The headers count cards and show the queue; adding a card to a full step is refused; a column over
    its limit says so in words and clears live; the filter hides cards but the counts stay, at 390
    px."""
    journey.walk(header_counts_cards_and_queue_area)
    journey.walk(creating_into_a_full_step_shows_the_conflict_and_creates_nothing)
    journey.walk(over_limit_warning_is_not_colour_alone_and_clears_live)
    journey.walk(filter_hides_cards_but_the_header_counts_stay)


def test_a_member_works_a_task_in_its_dialog(journey):
    """Opens a card by click and Enter and saves Markdown safely; archives, restores (refused while full)
    and deletes from a direct link; sees live changes unless editing; keeps focus in the dialog on a
    phone; blocks and unblocks with a reason."""
    journey.walk(a_card_opens_by_click_and_enter_and_saves_markdown_safely)
    journey.walk(archive_restore_delete_and_the_history_from_a_direct_link)
    journey.walk(live_changes_show_in_the_open_dialog_unless_the_field_is_being_edited)
    journey.walk(focus_stays_in_the_dialog_which_fills_a_narrow_screen)
    journey.walk(block_and_unblock_with_a_reason_from_the_dialog)


def test_viewers_watch_live(journey):
    """A second viewer sees a move and its pull live; a viewer can neither move nor open the settings,
    reads a task without write controls (the server refuses a forced write) and has no session
    settings."""
    journey.walk(second_viewer_sees_the_move_and_the_pull_live)
    journey.walk(viewers_watch_but_cannot_move_or_open_settings)
    journey.walk(viewers_read_the_task_without_write_controls_and_the_server_refuses_their_writes)
    journey.walk(a_viewer_has_no_session_settings_to_open)


def test_the_board_keeps_up_with_the_server(journey):
    """A missed version makes the board refetch; a step added elsewhere gets its column as the server
    renders it; after a reconnect the board shows what was missed; a member who loses access is told,
    and the board stops reconnecting."""
    journey.walk(a_version_gap_makes_the_board_refetch)
    journey.walk(a_step_added_live_gets_the_column_and_cards_the_server_renders)
    journey.walk(after_a_reconnect_the_board_shows_what_was_missed)
    journey.walk(a_member_who_loses_access_is_told_and_the_board_stops_reconnecting)


def test_the_limits_show_on_the_board(journey):
    """Cards say their assignee, expedite and why they wait, as the API does, through changes; the filter
    bar hides by assignee and class; a group's band counts over its columns live; the page's waiting
    rule and the detail's wording match the shared table; a place reads as an ordinal."""
    journey.walk(cards_show_assignee_expedite_and_why_they_wait_as_the_api_says_through_changes)
    journey.walk(the_filter_bar_hides_by_assignee_and_class_but_the_counts_stay)
    journey.walk(a_group_s_band_shows_its_count_over_its_columns_live)
    journey.walk(the_page_says_why_each_card_waits_as_the_table_does)
    journey.walk(the_page_judges_moves_as_the_table_does)
    journey.walk(a_place_reads_as_an_ordinal)


def test_the_limits_show_in_the_task_dialog(journey):
    """Assignee and class of service save, a refusal names its limit; the dialog says why a task waits and
    follows the board; it lists the agent sessions, starts and cancels one (a viewer sees them
    without buttons)."""
    journey.walk(assignee_and_class_of_service_save_and_a_refusal_shows_its_limit)
    journey.walk(the_detail_says_why_a_task_waits_and_follows_the_board)
    journey.walk(the_detail_lists_the_agent_sessions_and_starts_and_cancels_one)


def test_agents_work_on_the_board(journey):
    """Sessions started through the API show on the cards and in the header, live, through boot and
    failure; a step's agents queue in line and move up."""
    journey.walk(sessions_started_through_the_api_show_on_the_cards_and_in_the_header_live)
    journey.walk(a_step_s_agents_queue_in_line_and_move_up_live)


# --- chapters ---


def a_drag_over_a_full_step_shows_the_refusal_before_the_drop(open_board, owner, workflow, board, make_task, axe):
    backlog, doing, done = board
    make_task(doing, "Busy 1")
    make_task(doing, "Busy 2")
    ideas = [make_task(backlog, f"Idea {n}") for n in range(3)]  # In Progress is full: they wait
    page = open_board(owner, workflow)
    preview = column(page, doing).locator('[data-role="drop-preview"]')
    expect(preview).to_be_hidden()

    hold_over(page, ideas[1], doing)
    expect(preview).to_have_text("Full: In Progress")
    expect(column(page, doing)).to_have_attribute("data-drop", "full")
    expect(page.get_by_role("status", name="Move preview")).to_have_text(
        "Full: In Progress. A drop here will be refused."
    )
    shot(page, "board-drag-over-a-full-step")
    axe(page, "the board while a card is dragged over a full step")
    page.mouse.up()

    expect(page.get_by_role("alert")).to_contain_text(FULL)  # the server was asked, and refused
    expect(preview).to_be_hidden()
    expect(titles(page, backlog)).to_have_text(["Idea 0", "Idea 1", "Idea 2"])
    expect(titles(page, doing)).to_have_text(["Busy 1", "Busy 2"])
    expect(column(page, doing).locator('[data-role="wip-count"]')).to_have_text("2/2")
    assert step_of(ideas[1]) == backlog.pk
    expect(version(page)).to_have_attribute("data-version", "5")


def a_keyboard_move_into_a_full_step_is_previewed_and_takes_a_second_press(
    open_board, owner, workflow, board, make_task
):
    backlog, doing, done = board
    make_task(doing, "Busy 1")
    make_task(doing, "Busy 2")
    idea = make_task(backlog, "Idea")  # In Progress is full: it waits in Backlog
    page = open_board(owner, workflow)
    moves = []
    page.on("request", lambda request: "/move/" in request.url and moves.append(request.url))

    card(page, idea).focus()
    page.keyboard.press("Shift+ArrowRight")
    expect(page.get_by_role("status", name="Move preview")).to_have_text(
        "Full: In Progress. Press again to try the move anyway; the server will refuse it."
    )
    expect(column(page, doing).locator('[data-role="drop-preview"]')).to_have_text("Full: In Progress")
    expect(titles(page, backlog)).to_have_text(["Idea"])
    assert moves == []  # a first press only says what the move would meet

    page.keyboard.press("Shift+ArrowRight")
    expect(page.get_by_role("alert")).to_contain_text(FULL)
    expect(titles(page, backlog)).to_have_text(["Idea"])
    expect(card(page, idea)).to_be_focused()
    assert len(moves) == 1
    assert step_of(idea) == backlog.pk


def network_error_rolls_back_with_its_own_message(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "Busy 1")
    make_task(doing, "Busy 2")
    idea = make_task(backlog, "Idea")  # In Progress is full: it waits in Backlog
    page = open_board(owner, workflow)
    page.route("**/move/", lambda route: route.abort())

    drag(page, idea, done)

    expect(page.get_by_role("alert")).to_contain_text("Network error")
    expect(titles(page, backlog)).to_have_text(["Idea"])
    expect(titles(page, done)).to_have_count(0)
    assert step_of(idea) == backlog.pk


def accepted_drag_moves_the_card_and_the_pull_follows(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    busy = make_task(doing, "Busy")
    make_task(doing, "Also busy")
    waiting = make_task(backlog, "Next up")  # In Progress is full: it waits in Backlog
    page = open_board(owner, workflow)

    drag(page, busy, done)

    expect(titles(page, done)).to_have_text(["Busy"])
    expect(titles(page, doing)).to_have_text(["Also busy", "Next up"])  # pulled from Backlog
    expect(version(page)).to_have_attribute("data-version", "4")
    expect(page.get_by_role("alert")).to_be_hidden()
    assert step_of(busy) == done.pk
    assert step_of(waiting) == doing.pk


def drag_into_a_full_queue_mode_step_lands_in_its_queue(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    review = WorkflowStep.objects.create(workflow=workflow, name="Review", position=3, wip_limit=1, on_full="queue")
    make_task(review, "Under review")
    idea = make_task(backlog, "Idea")
    page = open_board(owner, workflow)
    queue = column(page, review).locator('[data-role="queue"]')
    expect(queue.locator('[data-role="queue-count"]')).to_have_text("0")
    before = version(page).get_attribute("data-version")

    drag(page, idea, review)

    expect(queue.locator(".card-title")).to_have_text(["Idea"])  # at once: the preview said it queues
    expect(version(page)).not_to_have_attribute("data-version", before)  # and the server's change came
    expect(queue.locator('[data-role="queue-count"]')).to_have_text("1")
    expect(titles(page, review)).to_have_text(["Under review"])
    expect(column(page, review).locator('[data-role="wip-count"]')).to_have_text("1/1")
    expect(page.get_by_role("alert")).to_be_hidden()
    assert Task.objects.get(pk=idea.pk).admitted is False


def a_change_arriving_during_a_drag_does_not_lose_the_drop(open_board, live_api, owner, workflow, board, make_task):
    backlog, doing, done = board
    without_feeder(doing)  # nothing is pulled: the cards stay where they are put
    idea = make_task(backlog, "Idea")
    make_task(backlog, "Other")
    page = open_board(owner, workflow)
    before = int(version(page).get_attribute("data-version"))

    hold_over(page, idea, doing)  # carried over In Progress, not dropped yet
    expect(titles(page, doing)).to_have_text(["Idea"])
    arrived = live_api.post("/api/v1/tasks/", json={"step_id": str(backlog.pk), "title": "Arrived"})
    assert arrived.status_code == 201
    expect(version(page)).to_have_attribute("data-version", str(before + 1))  # a colleague's change came
    expect(titles(page, doing)).to_have_text(["Idea"])  # the card stays where it is carried
    page.mouse.up()

    expect(version(page)).to_have_attribute("data-version", str(before + 2))  # the drop was sent and made
    expect(titles(page, doing)).to_have_text(["Idea"])
    expect(titles(page, backlog)).to_have_text(["Other", "Arrived"])  # drawn at the drop
    assert step_of(idea) == doing.pk
    assert page.errors == []


def keyboard_move_between_and_within_columns(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    without_feeder(doing)
    first = make_task(backlog, "First")
    make_task(backlog, "Second")
    page = open_board(owner, workflow)

    card(page, first).focus()
    page.keyboard.press("Shift+ArrowDown")
    expect(titles(page, backlog)).to_have_text(["Second", "First"])
    expect(version(page)).to_have_attribute("data-version", "3")
    page.keyboard.press("Shift+ArrowRight")
    expect(titles(page, doing)).to_have_text(["First"])
    expect(version(page)).to_have_attribute("data-version", "4")
    expect(card(page, first)).to_be_focused()
    assert step_of(first) == doing.pk
    assert list(Task.objects.filter(step=backlog).values_list("title", flat=True)) == ["Second"]


def reorders_show_the_mover_and_a_viewer_the_servers_order_through_a_rebalance(
    open_board, owner, workflow, board, make_task
):
    # Tied keys leave no room between the cards: the first reorder rebalances the column
    # (its message brings every new key); the next takes a key between two rebalanced ones.
    _, _, done = board
    a, _, c, d = (make_task(done, title, position=0) for title in "ABCD")
    mover, watcher = open_board(owner, workflow), open_board(owner, workflow)

    def shown(*expected, at):
        for page in (mover, watcher):
            expect(titles(page, done)).to_have_text(list(expected))
            expect(version(page)).to_have_attribute("data-version", str(at))
        assert list(Task.objects.filter(step=done).in_board_order().values_list("title", flat=True)) == list(expected)

    card(mover, d).focus()
    mover.keyboard.press("Shift+ArrowUp")  # between B and C, whose keys are tied
    shown("A", "B", "D", "C", at=5)
    card(mover, c).focus()
    mover.keyboard.press("Shift+ArrowUp")  # between B and D, GAP apart now
    shown("A", "B", "C", "D", at=6)
    drag(mover, a, done)  # to the end of its own column
    shown("B", "C", "D", "A", at=7)


def header_counts_cards_and_queue_area(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "Urgent fix", priority=0)
    make_task(doing, "Routine fix")
    for n in range(3):  # after In Progress is full: they wait in Backlog on a settled board
        make_task(backlog, f"Idea {n}")
    review = WorkflowStep.objects.create(workflow=workflow, name="Review", position=3, wip_limit=1, on_full="queue")
    make_task(review, "Reviewed first")
    make_task(review, "Waits in line")

    page = open_board(owner, workflow)
    counts = page.locator('[data-role="wip-count"]')
    expect(counts).to_have_text(["3", "2/2", "0", "1/1"])
    expect(column(page, doing).locator('[data-role="wip-count"]')).to_have_attribute("aria-label", "2 of 2 (WIP limit)")
    urgent = column(page, doing).locator(".card").first
    expect(urgent.locator('[data-role="priority"]')).to_have_text("critical")
    expect(urgent.locator('[data-role="age"]')).to_have_text("just now")
    queue = column(page, review).locator('[data-role="queue"]')
    expect(queue).to_be_visible()
    expect(queue.locator('[data-role="queue-count"]')).to_have_text("1")
    expect(queue.locator(".card-title")).to_have_text(["Waits in line"])
    expect(column(page, backlog).locator('[data-role="queue"]')).to_be_hidden()
    assert page.errors == []


def creating_into_a_full_step_shows_the_conflict_and_creates_nothing(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "Busy 1")
    make_task(doing, "Busy 2")
    page = open_board(owner, workflow)
    form = column(page, doing).locator('[data-role="add-task"]')

    form.locator("input[name=title]").fill("One too many")
    form.locator("button").click()

    expect(page.get_by_role("alert")).to_contain_text(FULL)
    assert not Task.objects.filter(title="One too many").exists()

    backlog_form = column(page, backlog).locator('[data-role="add-task"]')
    backlog_form.locator("input[name=title]").fill("Fits")
    backlog_form.locator("select[name=priority]").select_option("high")
    backlog_form.locator("button").click()
    expect(titles(page, backlog)).to_have_text(["Fits"])
    expect(column(page, backlog).locator('[data-role="priority"]')).to_have_text(["high"])
    expect(version(page)).to_have_attribute("data-version", "3")
    expect(page.locator('.card-title:text-is("Fits")')).to_have_count(1)  # not applied twice


def over_limit_warning_is_not_colour_alone_and_clears_live(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    first = make_task(doing, "First")
    make_task(doing, "Second")
    off_loop(step_update, step=doing, actor=owner, wip_limit=1)  # lowered below occupancy
    page = open_board(owner, workflow)
    header = column(page, doing)

    expect(header).to_have_attribute("data-over-limit", "true")
    expect(header.locator('[data-role="wip-count"]')).to_have_text("2/1")
    expect(header.locator('[data-role="wip-count"]')).to_have_attribute("aria-label", "2 of 1: over the WIP limit")
    expect(header.locator('[data-role="wip-warning"]')).to_have_text(re.compile("Over limit"))
    expect(column(page, backlog)).to_have_attribute("data-over-limit", "false")
    expect(column(page, backlog).locator('[data-role="wip-count"]')).to_have_attribute("aria-label", "0 tasks")

    drag(page, first, done)

    expect(header).to_have_attribute("data-over-limit", "false")
    expect(header.locator('[data-role="wip-count"]')).to_have_text("1/1")
    expect(header.locator('[data-role="wip-warning"]')).to_be_hidden()
    expect(version(page)).to_have_attribute("data-version", "4")  # no write left in flight


def filter_hides_cards_but_the_header_counts_stay(open_page, api, owner, workflow, board):
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


def a_card_opens_by_click_and_enter_and_saves_markdown_safely(open_board, owner, workflow, board, make_task):
    backlog, _, _ = board
    task = make_task(backlog, "Write the brief")
    page = open_board(owner, workflow)
    board_url = page.url

    card(page, task).click()
    expect(dialog(page)).to_be_visible()
    expect(page).to_have_url(f"{board_url}tasks/{task.pk}/")
    expect(field(page, "Title")).to_have_value("Write the brief")
    expect(field(page, "Title")).to_be_focused()
    # No heading over an empty description: its preview appears as it is written
    preview = dialog(page).get_by_role("heading", name="Description preview")
    expect(preview).to_be_hidden()
    field(page, "Title").fill("Write the product brief")
    field(page, "Description").fill(PAYLOAD)
    expect(preview).to_be_visible()
    field(page, "Priority").select_option("high")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("status")).to_have_text("Saved.")

    status, saved = read(page, f"tasks/{task.pk}/")
    assert status == 200
    assert (saved["title"], saved["description"], saved["priority"]) == ("Write the product brief", PAYLOAD, "high")
    rendered = dialog(page).locator('[data-role="description-html"]')
    expect(rendered.locator("strong")).to_have_text("the brief")
    assert rendered.locator("script").count() == 0
    assert rendered.locator("[onerror]").count() == 0
    assert rendered.locator('a[href^="javascript"]').count() == 0
    # Raw HTML shows as the text it is.
    expect(rendered).to_contain_text("<script>window.pwned = 'script'</script>")
    expect(rendered).to_contain_text("a link")  # kept as text, without its javascript: URL
    assert page.evaluate("window.pwned") is None
    expect(card(page, task).locator(".card-title")).to_have_text("Write the product brief")

    page.keyboard.press("Escape")
    expect(dialog(page)).to_be_hidden()
    expect(page).to_have_url(board_url)
    expect(card(page, task)).to_be_focused()

    page.keyboard.press("Enter")
    expect(dialog(page)).to_be_visible()
    expect(page).to_have_url(f"{board_url}tasks/{task.pk}/")
    expect(field(page, "Priority")).to_have_value("high")
    button(page, "Close").click()
    expect(page).to_have_url(board_url)
    expect(card(page, task)).to_be_focused()
    assert page.evaluate("window.pwned") is None
    assert page.errors == []


def archive_restore_delete_and_the_history_from_a_direct_link(open_board, owner, workflow, board, make_task):
    backlog, doing, _ = board
    first = make_task(doing, "Review")
    make_task(doing, "Deploy")
    task = make_task(backlog, "Hotfix the login")  # after In Progress is full: it waits in Backlog
    off_loop(task_move, task=task, to_step=doing, actor=owner, force=True, reason="prod is down")
    page = open_board(owner, workflow)
    page.goto(f"{page.url}tasks/{task.pk}/")

    expect(dialog(page)).to_be_visible()
    expect(dialog(page).get_by_role("heading", name="Hotfix the login")).to_be_visible()
    expect(history(page)).to_have_count(2)
    expect(history(page).nth(0)).to_contain_text("Created in Backlog by olivia")
    forced = history(page).nth(1)
    expect(forced).to_contain_text("Forced admission")
    expect(forced).to_contain_text("Forced into In Progress over its WIP limit")
    expect(forced).to_contain_text("Why: prod is down")
    expect(forced).to_have_class(re.compile("is-forced"))

    button(page, "Archive").click()
    expect(button(page, "Restore")).to_be_focused()
    expect(button(page, "Archive")).to_be_hidden()
    assert read(page, f"tasks/{task.pk}/")[1]["archived_at"] is not None
    expect(card(page, task)).to_have_count(0)
    expect(history(page).nth(2)).to_contain_text("Archived from In Progress")

    # In Progress is full again (2 of 2): the server refuses the restore and says why.
    button(page, "Restore").click()
    expect(dialog(page).get_by_role("alert")).to_have_text(FULL)
    assert read(page, f"tasks/{task.pk}/")[1]["archived_at"] is not None

    off_loop(task_archive, task=first, actor=owner)
    button(page, "Restore").click()
    expect(button(page, "Archive")).to_be_focused()
    expect(dialog(page).get_by_role("alert")).to_be_hidden()
    restored = read(page, f"tasks/{task.pk}/")[1]
    assert restored["archived_at"] is None and restored["step_id"] == str(doing.pk)
    expect(history(page).nth(3)).to_contain_text("Restored to In Progress by olivia")
    expect(card(page, task)).to_have_count(1)

    button(page, "Delete").click()
    expect(dialog(page).get_by_text("Delete this task for good?")).to_be_visible()
    button(page, "Keep it").click()
    expect(button(page, "Delete")).to_be_focused()
    assert read(page, f"tasks/{task.pk}/")[0] == 200
    button(page, "Delete").click()
    button(page, "Delete for good").click()
    expect(dialog(page)).to_be_hidden()
    expect(page).to_have_url(re.compile(rf"/workflows/{workflow.pk}/$"))
    assert read(page, f"tasks/{task.pk}/")[0] == 404
    expect(card(page, task)).to_have_count(0)
    assert page.errors == []


def live_changes_show_in_the_open_dialog_unless_the_field_is_being_edited(
    open_board, owner, workflow, board, make_task
):
    backlog, _, _ = board
    task = make_task(backlog, "Draft")
    page = open_board(owner, workflow)
    card(page, task).click()
    expect(field(page, "Title")).to_have_value("Draft")

    off_loop(task_update, task=task, actor=owner, title="Draft two", description="*new*")
    expect(field(page, "Title")).to_have_value("Draft two")
    expect(dialog(page).locator('[data-role="description-html"] em')).to_have_text("new")

    field(page, "Title").fill("My title")
    off_loop(task_update, task=task, actor=owner, title="Their title")
    expect(dialog(page).get_by_role("heading", name="Their title")).to_be_visible()
    expect(dialog(page).get_by_text("Someone changed this task while you were editing it.")).to_be_visible()
    expect(field(page, "Title")).to_have_value("My title")
    button(page, "Show their version").click()
    expect(field(page, "Title")).to_have_value("Their title")
    assert page.errors == []


def focus_stays_in_the_dialog_which_fills_a_narrow_screen(open_board, owner, workflow, board, make_task):
    backlog, _, _ = board
    task = make_task(backlog, "On the phone")
    page = open_board(owner, workflow)
    page.set_viewport_size({"width": 390, "height": 844})
    card(page, task).focus()
    page.keyboard.press("Enter")
    expect(dialog(page)).to_be_visible()
    box = dialog(page).bounding_box()
    assert (box["x"], box["y"], box["width"], box["height"]) == (0, 0, 390, 844)
    inside = "document.getElementById('task-dialog').contains(document.activeElement)"
    for key in ["Tab"] * 12 + ["Shift+Tab"] * 12:
        page.keyboard.press(key)
        assert page.evaluate(inside), key
    page.keyboard.press("Escape")
    expect(card(page, task)).to_be_focused()


def block_and_unblock_with_a_reason_from_the_dialog(open_board, owner, workflow, board, make_task, axe):
    _, _, done = board
    task = make_task(done, "Deploy the release")
    other = make_task(done, "Write the notes")
    page = open_board(owner, workflow)
    card(page, task).click()
    expect(dialog(page)).to_be_visible()

    # No reason: refused, and the field says why.
    button(page, "Block").click()
    expect(dialog(page).get_by_role("alert")).to_be_visible()
    expect(dialog(page).locator('[data-error-for="reason"]')).not_to_be_empty()
    expect(field(page, "Reason")).to_have_attribute("aria-invalid", "true")
    assert read(page, f"tasks/{task.pk}/")[1]["blocked_reason"] == ""

    field(page, "Reason").fill("waiting on ops")
    button(page, "Block").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Blocked.")
    assert read(page, f"tasks/{task.pk}/")[1]["blocked_reason"] == "waiting on ops"
    expect(dialog(page).locator('[data-role="blocked-note"]')).to_have_text("Blocked: waiting on ops")
    expect(card(page, task).locator('[data-role="blocked"]')).to_have_text("Blocked: waiting on ops")
    expect(history(page).last).to_contain_text("Blocked")
    expect(history(page).last).to_contain_text("Why: waiting on ops")
    axe(page, "the task dialog of a blocked task")

    button(page, "Unblock").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Unblocked.")
    assert read(page, f"tasks/{task.pk}/")[1]["blocked_reason"] == ""
    expect(button(page, "Unblock")).to_be_hidden()
    expect(card(page, task).locator('[data-role="blocked"]')).to_be_hidden()
    expect(history(page).last).to_contain_text("Unblocked")

    # The filter bar's "Blocked" shows blocked cards only, also one blocked by someone else.
    button(page, "Close").click()
    off_loop(task_block, task=other, actor=owner, reason="needs a decision")
    expect(card(page, other).locator('[data-role="blocked"]')).to_have_text("Blocked: needs a decision")
    page.get_by_label("Blocked", exact=True).select_option("blocked")
    expect(card(page, task)).to_be_hidden()
    expect(card(page, other)).to_be_visible()
    page.get_by_label("Blocked", exact=True).select_option("unblocked")
    expect(card(page, task)).to_be_visible()
    expect(card(page, other)).to_be_hidden()
    assert page.errors == []


def second_viewer_sees_the_move_and_the_pull_live(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    busy = make_task(doing, "Busy")
    make_task(doing, "Also busy")
    waiting = make_task(backlog, "Next up")  # In Progress is full: it waits in Backlog
    member = UserFactory(username="mia")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    mover = open_board(owner, workflow)
    watcher = open_board(member, workflow)
    watcher.evaluate("window.notReloaded = true")

    drag(mover, busy, done)

    expect(titles(watcher, done)).to_have_text(["Busy"])
    expect(titles(watcher, doing)).to_have_text(["Also busy", "Next up"])
    expect(column(watcher, backlog).locator('[data-role="wip-count"]')).to_have_text("0")
    expect(column(watcher, doing).locator('[data-role="wip-count"]')).to_have_text("2/2")
    expect(version(watcher)).to_have_attribute("data-version", "4")
    assert watcher.evaluate("window.notReloaded") is True
    assert step_of(waiting) == doing.pk
    # The mover's own move, confirmed by its broadcast, is shown once.
    expect(mover.locator(f'.card[data-task-id="{busy.pk}"]')).to_have_count(1)
    expect(titles(mover, doing)).to_have_text(["Also busy", "Next up"])


def viewers_watch_but_cannot_move_or_open_settings(board_server, open_board, workflow, board, make_task):
    backlog, doing, done = board
    without_feeder(doing)  # the move the viewer tries would be admitted for a member
    idea = make_task(backlog, "Idea")
    viewer = UserFactory(username="vic")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    page = open_board(viewer, workflow)
    expect(page.locator('[data-role="add-task"]')).to_have_count(0)
    expect(page.locator("text=Step settings")).to_have_count(0)
    card(page, idea).focus()
    page.keyboard.press("Shift+ArrowRight")
    expect(titles(page, backlog)).to_have_text(["Idea"])
    assert step_of(idea) == backlog.pk
    response = page.goto(f"{board_server.url}/workflows/{workflow.pk}/settings/")
    assert response.status == 403


def viewers_read_the_task_without_write_controls_and_the_server_refuses_their_writes(
    open_board, owner, workflow, board, make_task
):
    backlog, doing, _ = board
    for title in ("Busy", "Also busy"):  # a full In Progress: the task stays in Backlog, one history entry
        make_task(doing, title)
    task = make_task(backlog, "Read only", description="Some **notes**")
    viewer = UserFactory(username="vic")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    page = open_board(viewer, workflow)

    card(page, task).click()
    expect(dialog(page)).to_be_visible()
    expect(dialog(page).get_by_role("heading", name="Read only")).to_be_visible()
    expect(dialog(page).locator('[data-role="description-html"] strong')).to_have_text("notes")
    expect(dialog(page).get_by_text("Priority: medium")).to_be_visible()
    expect(history(page)).to_have_count(1)
    for label in ("Title", "Description", "Priority"):
        expect(dialog(page).get_by_label(label, exact=True)).to_have_count(0)
    for name in ("Save", "Archive", "Restore", "Delete"):
        expect(page.get_by_role("button", name=name, exact=True)).to_have_count(0)

    # A write forced from the viewer's own session, CSRF token and all, is refused.
    status = page.evaluate(
        """async (id) => {
            const token = document.cookie.match(/csrftoken=([^;]+)/)[1];
            const response = await fetch(`/api/v1/tasks/${id}/`, {
                method: "PATCH", credentials: "same-origin",
                headers: {"Content-Type": "application/json", "X-CSRFToken": token},
                body: JSON.stringify({title: "Taken over"}),
            });
            return response.status;
        }""",
        str(task.pk),
    )
    assert status == 403
    assert read(page, f"tasks/{task.pk}/")[1]["title"] == "Read only"
    page.keyboard.press("Escape")
    expect(card(page, task)).to_be_focused()


def a_viewer_has_no_session_settings_to_open(board_server, open_page, workflow, agent_board):
    viewer = UserFactory(username="vera")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    page = open_page(viewer, f"/workflows/{workflow.pk}/")
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    expect(agents_header(page)).to_have_text("Agents: 0/1 running, 0 queued Workspace: 0 running, 0 queued")
    assert page.goto(f"{board_server.url}/workflows/{workflow.pk}/settings/").status == 403


def a_version_gap_makes_the_board_refetch(board_server, open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    first = make_task(backlog, "First")
    second = make_task(backlog, "Second")
    board_fetches = []

    def drop_the_first_change(page):
        def route(ws):
            server = ws.connect_to_server()
            dropped = []

            def forward(message):
                if json.loads(message).get("version") == 3 and not dropped:
                    dropped.append(message)  # this viewer never hears of version 3
                    return
                ws.send(message)

            server.on_message(forward)

        page.route_web_socket(re.compile(r"/ws/workflows/"), route)
        page.on("request", lambda r: "/api/v1/" in r.url and board_fetches.append(r.url))

    page = open_board(owner, workflow, before_load=drop_the_first_change)
    to_done = {"step_id": str(done.pk)}
    with server_api(board_server, owner) as api:
        assert api.post(f"/api/v1/tasks/{first.pk}/move/", json=to_done).is_success
        assert api.post(f"/api/v1/tasks/{second.pk}/move/", json=to_done).is_success

    expect(version(page)).to_have_attribute("data-version", "4")
    expect(titles(page, done)).to_have_text(["First", "Second"])
    expect(titles(page, backlog)).to_have_count(0)
    assert board_fetches == [f"{board_server.url}/api/v1/workflows/{workflow.pk}/board/"]


def a_step_added_live_gets_the_column_and_cards_the_server_renders(board_server, open_board, owner, workflow, board):
    backlog, doing, done = board
    page = open_board(owner, workflow)
    page.evaluate("window.notReloaded = true")
    review = {
        "workflow_id": str(workflow.pk),
        "name": "Review <b>",
        "color": "#9c36b5",
        "wip_limit": 1,
        "on_full": "queue",
    }
    with server_api(board_server, owner) as api:
        step_id = api.post("/api/v1/steps/", json=review).json()["id"]
    new_column = column(page, WorkflowStep(pk=step_id))
    expect(page.locator(".column h2")).to_have_text(["Backlog", "In Progress", "Done", "Review <b>"])
    expect(new_column).to_have_css("border-top-color", "rgb(156, 54, 181)")
    form = new_column.locator('[data-role="add-task"]')
    form.locator("input[name=title]").fill("Check it")
    form.locator("select[name=priority]").select_option("high")
    form.locator("button").click()
    expect(new_column.locator(".card-title")).to_have_text(["Check it"])
    assert page.evaluate("window.notReloaded") is True

    fresh = open_board(owner, workflow)  # the same board as the server renders it
    html = "column => column.outerHTML"
    assert new_column.evaluate(html) == column(fresh, WorkflowStep(pk=step_id)).evaluate(html)
    check_it = Task.objects.get(title="Check it")
    drag(page, check_it, done)  # the new lists take part in dragging
    expect(titles(page, done)).to_have_text(["Check it"])
    # The card moved at once (optimistic); the test ends only once the server has committed
    # the move: a request still in flight at the teardown's flush can deadlock with it.
    eventually(lambda: step_of(check_it) == done.pk)
    assert page.errors == fresh.errors == []
    assert page.errors == []


def after_a_reconnect_the_board_shows_what_was_missed(board_server, open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    idea = make_task(backlog, "Idea")
    sockets = []

    def keep_sockets(page):
        def route(ws):
            ws.connect_to_server()
            sockets.append(ws)

        page.route_web_socket(re.compile(r"/ws/workflows/"), route)

    page = open_board(owner, workflow, before_load=keep_sockets)
    page.evaluate("window.notReloaded = true")
    page.route("**/api/v1/workflows/*/board/", lambda route: route.abort())  # the socket alone
    with server_api(board_server, owner) as api:
        sockets[0].close()  # the server side goes away; the change is made while disconnected
        to_doing = {"step_id": str(doing.pk)}
        assert api.post(f"/api/v1/tasks/{idea.pk}/move/", json=to_doing).is_success

    expect(page.locator('[data-role="live"]')).to_have_attribute("data-state", "live")
    expect(titles(page, doing)).to_have_text(["Idea"])
    expect(version(page)).to_have_attribute("data-version", "2")
    assert len(sockets) == 2
    assert page.evaluate("window.notReloaded") is True


def a_member_who_loses_access_is_told_and_the_board_stops_reconnecting(open_board, live_api, workflow):
    mira = UserFactory(username="mira")
    MembershipFactory(workspace=workflow.workspace, user=mira, role=Role.MEMBER)
    page = open_board(mira, workflow)
    page.clock.install()  # timers on demand: the reconnect's wait is run below, not waited for
    badge = page.locator('[data-role="live"]')

    assert live_api.delete(f"/api/v1/workspaces/{workflow.workspace_id}/members/{mira.pk}/").status_code == 204
    expect(badge).to_have_attribute("data-state", "refused")
    expect(badge).to_have_text("No access")
    expect(page.get_by_role("alert")).to_contain_text("This board is no longer open to you")
    page.clock.run_for(60_000)  # a minute of backoff: a socket trying again would say "Connecting…"
    expect(badge).to_have_attribute("data-state", "refused")
    assert page.errors == []


def cards_show_assignee_expedite_and_why_they_wait_as_the_api_says_through_changes(
    open_board, axe, live_api, owner, workflow, board, make_task
):
    alice = UserFactory(username="alice", first_name="Alice", last_name="Brown")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER)
    backlog, doing, done = board
    busy = make_task(doing, "Busy", assignee_id=alice.pk)
    make_task(doing, "Also busy")
    ideas = [make_task(backlog, f"Idea {n}") for n in range(3)]  # In Progress is full: they wait
    hotfix = make_task(backlog, "Hotfix", class_of_service="expedite", assignee_id=alice.pk)
    review = WorkflowStep.objects.create(workflow=workflow, name="Review", position=3, wip_limit=1, on_full="queue")
    make_task(review, "Reviewed first")
    make_task(review, "Waits in line")
    make_task(review, "Waits longer")
    page = open_board(owner, workflow)

    # Expedite work is pulled first, so it is next; the queue says each place in it.
    expect(card(page, hotfix).locator('[data-role="waiting"]')).to_have_text("next for In Progress")
    expect(card(page, ideas[1]).locator('[data-role="waiting"]')).to_have_text("3rd for In Progress")
    expect(column(page, review).locator('[data-role="queued-cards"] [data-role="waiting"]')).to_have_text(
        ["1st in queue", "2nd in queue"]
    )
    expect(card(page, busy).locator('[data-role="waiting"]')).to_be_hidden()
    expect(card(page, hotfix).locator('[data-role="expedite"]')).to_have_text("Expedite")
    expect(card(page, ideas[0]).locator('[data-role="expedite"]')).to_be_hidden()
    assignee = card(page, busy).locator('[data-role="assignee"]')
    expect(assignee).to_have_attribute("title", "Alice Brown")
    expect(assignee.locator('[data-role="assignee-initials"]')).to_have_text("AB")
    expect(card(page, busy).get_by_text("Assigned to Alice Brown")).to_be_attached()
    expect(card(page, ideas[0]).locator('[data-role="assignee"]')).to_be_hidden()
    board_now = api_board(live_api, workflow)
    assert shown_labels(page, board_now) == expected_labels(page, board_now)
    axe(page, "the board with assignees, expedite work and waiting cards")
    shot(page, "board-assignee-expedite-waiting")

    # When Idea 0 is blocked, it is passed over: the ideas behind it move up.
    assert live_api.post(f"/api/v1/tasks/{ideas[0].pk}/block/", json={"reason": "Waiting on legal"}).status_code == 200
    expect(card(page, ideas[1]).locator('[data-role="waiting"]')).to_have_text("2nd for In Progress")
    board_now = api_board(live_api, workflow)
    assert shown_labels(page, board_now) == expected_labels(page, board_now)

    # When Busy is done, In Progress pulls the hotfix (expedite first); Idea 1 is next.
    drag(page, busy, done)
    expect(column(page, doing).locator(".card-title")).to_have_text(["Also busy", "Hotfix"])
    expect(card(page, ideas[1]).locator('[data-role="waiting"]')).to_have_text("next for In Progress")
    board_now = api_board(live_api, workflow)
    assert shown_labels(page, board_now) == expected_labels(page, board_now)
    assert [t["title"] for t in board_now["steps"][1]["tasks"]] == ["Also busy", "Hotfix"]

    # When Idea 2 moves to the top of Backlog and the review queue moves up by one: every
    # label follows, as the API words them.
    card(page, ideas[2]).focus()
    page.keyboard.press("Shift+ArrowUp")
    expect(version(page)).to_have_attribute("data-version", str(board_now["workflow"]["version"] + 1))
    page.keyboard.press("Shift+ArrowUp")
    expect(version(page)).to_have_attribute("data-version", str(board_now["workflow"]["version"] + 2))
    expect(column(page, backlog).locator(".card-title")).to_have_text(["Idea 2", "Idea 0", "Idea 1"])
    first_review = board_now["steps"][3]["tasks"][0]
    assert live_api.post(f"/api/v1/tasks/{first_review['id']}/move/", json={"step_id": str(done.pk)}).status_code == 200
    expect(column(page, review).locator('[data-role="queued-cards"] [data-role="waiting"]')).to_have_text(
        ["1st in queue"]
    )
    board_now = api_board(live_api, workflow)
    labels = shown_labels(page, board_now)
    assert labels == expected_labels(page, board_now)
    assert labels[str(ideas[2].pk)] == "next for In Progress"

    # When an agent starts on Idea 2, a pull passes it over: Idea 1 is next again.
    assert live_api.post(f"/api/v1/tasks/{ideas[2].pk}/sessions/", json={}).status_code == 201
    expect(card(page, ideas[2]).locator('[data-role="agent"]')).to_have_text("Agent waiting for a runner")
    expect(card(page, ideas[1]).locator('[data-role="waiting"]')).to_have_text("next for In Progress")
    board_now = api_board(live_api, workflow)
    assert shown_labels(page, board_now) == expected_labels(page, board_now)
    assert page.errors == []


def the_filter_bar_hides_by_assignee_and_class_but_the_counts_stay(
    open_board, live_api, owner, workflow, board, make_task
):
    alice = UserFactory(username="alice", first_name="Alice", last_name="Brown")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER)
    backlog, doing, done = board
    make_task(doing, "Alice's fix", assignee_id=alice.pk)
    make_task(doing, "Hotfix", class_of_service="expedite")
    make_task(backlog, "Alice's idea", assignee_id=alice.pk, class_of_service="expedite")
    make_task(backlog, "Nobody's idea")
    page = open_board(owner, workflow)
    counts = page.locator('[data-role="wip-count"]')
    expect(counts).to_have_text(["2", "2/2", "0"])
    filter_bar = page.get_by_role("search", name="Filter cards")

    filter_bar.get_by_label("Assignee").select_option(label="Alice Brown")
    expect(page.locator(".card-title:visible")).to_have_text(["Alice's idea", "Alice's fix"])
    filter_bar.get_by_label("Class").select_option(label="Expedite")
    expect(page.locator(".card-title:visible")).to_have_text(["Alice's idea"])
    filter_bar.get_by_label("Assignee").select_option(label="Unassigned")
    expect(page.locator(".card-title:visible")).to_have_text(["Hotfix"])
    expect(filter_bar.get_by_role("status")).to_have_text("1 of 4 cards shown")
    expect(counts).to_have_text(["2", "2/2", "0"])

    # A card whose assignee changes elsewhere is filtered again.
    nobody = next(t for t in api_board(live_api, workflow)["steps"][0]["tasks"] if t["title"] == "Nobody's idea")
    filter_bar.get_by_label("Class").select_option(label="Any")
    expect(page.locator(".card-title:visible")).to_have_text(["Nobody's idea", "Hotfix"])
    assert live_api.patch(f"/api/v1/tasks/{nobody['id']}/", json={"assignee_id": alice.pk}).status_code == 200
    expect(page.locator(".card-title:visible")).to_have_text(["Hotfix"])
    expect(counts).to_have_text(["2", "2/2", "0"])
    assert page.errors == []


def a_group_s_band_shows_its_count_over_its_columns_live(
    open_board, axe, live_api, owner, workflow, grouped, make_task
):
    alice = UserFactory(username="alice", first_name="Alice", last_name="Brown")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER)
    backlog, build, review, done, group = grouped
    first = make_task(build, "Build the API", assignee_id=alice.pk)
    make_task(review, "Review the schema", class_of_service="expedite", assignee_id=owner.pk)
    ideas = [make_task(backlog, f"Idea {n}") for n in range(3)]  # the group is full: they wait
    page = open_board(owner, workflow)
    development = band(page, "Development")
    count = development.locator('[data-role="group-count"]')
    expect(count).to_have_text("2/2")
    expect(count).to_have_attribute("aria-label", "Group Development: 2 of 2 (WIP limit)")
    expect(development.get_by_role("heading")).to_have_text(["Build", "Review"])  # its columns, under it
    expect(card(page, ideas[0]).locator('[data-role="waiting"]')).to_have_text("next for Build")
    axe(page, "the board with a group")
    shot(page, "board-group-band")

    def group_now():
        return live_api.get(f"/api/v1/step-groups/{group.pk}/").json()

    # When Build's card is done, the group has room: Build pulls the next idea.
    drag(page, first, done)
    expect(column(page, build).locator(".card-title")).to_have_text(["Idea 0"])
    expect(count).to_have_text("2/2")
    assert group_now()["occupied"] == 2

    # When the group's limit is raised, Build pulls again; lowered below, it is over its limit, in words.
    assert live_api.patch(f"/api/v1/step-groups/{group.pk}/", json={"wip_limit": 3}).status_code == 200
    expect(count).to_have_text("3/3")
    expect(column(page, build).locator(".card-title")).to_have_text(["Idea 0", "Idea 1"])
    assert live_api.patch(f"/api/v1/step-groups/{group.pk}/", json={"wip_limit": 1, "name": "Dev"}).status_code == 200
    development = band(page, "Dev")
    expect(development.locator('[data-role="group-count"]')).to_have_text("3/1")
    expect(development.locator('[data-role="group-warning"]')).to_have_text("⚠ Over limit")
    expect(development.locator('[data-role="group-warning"]')).to_be_visible()
    expect(development.locator('[data-role="group-count"]')).to_have_attribute(
        "aria-label", "Group Dev: 3 of 1, over its WIP limit"
    )
    assert group_now()["over_limit"] is True

    # When the group is deleted, its band goes and its columns stay; Build, unlimited now,
    # pulls nothing, so no idea waits for it.
    assert live_api.delete(f"/api/v1/step-groups/{group.pk}/").status_code == 204
    expect(page.locator(".step-group")).to_have_count(0)
    expect(page.locator(".column h2")).to_have_text(["Backlog", "Build", "Review", "Done"])
    expect(card(page, ideas[2]).locator('[data-role="waiting"]')).to_be_hidden()

    # When a new group is made of Review and Done, its band comes, live.
    response = live_api.post(
        "/api/v1/step-groups/",
        json={
            "workflow_id": str(workflow.pk),
            "name": "Finishing",
            "wip_limit": 5,
            "step_ids": [str(review.pk), str(done.pk)],
        },
    )
    assert response.status_code == 201
    expect(band(page, "Finishing").get_by_role("heading")).to_have_text(["Review", "Done"])
    expect(band(page, "Finishing").locator('[data-role="group-count"]')).to_have_text(
        f"{response.json()['occupied']}/5"
    )
    axe(page, "the board with a new group")
    assert page.errors == []


def the_page_says_why_each_card_waits_as_the_table_does(open_board, owner, workflow, board):
    page = open_board(owner, workflow)
    shown = page.evaluate(SHOWN, TABLE)
    for case, cards in zip(TABLE["cases"], shown, strict=True):
        detail = {task: why and {**why, "detail": f"Waiting: {why['label']}"} for task, why in case["waiting"].items()}
        assert cards == detail, case["case"]


ORDINALS = {
    1: "1st",
    2: "2nd",
    3: "3rd",
    4: "4th",
    11: "11th",
    12: "12th",
    13: "13th",
    21: "21st",
    22: "22nd",
    111: "111th",
}


def the_page_judges_moves_as_the_table_does(open_board, owner, workflow, board):
    page = open_board(owner, workflow)
    shown = page.evaluate(JUDGED, ADMISSION_TABLE)
    for case, judged in zip(ADMISSION_TABLE["cases"], shown, strict=True):
        assert judged == case["expected"], case["case"]


def a_place_reads_as_an_ordinal(open_board, owner, workflow, board):
    page = open_board(owner, workflow)
    shown = page.evaluate(
        """async (places) => {
            const base = document.querySelector('script[type="module"][src*="board/board"]').src;
            const { ordinal } = await import(new URL("render.js", base));
            return places.map(ordinal);
        }""",
        list(ORDINALS),
    )
    assert shown == list(ORDINALS.values())


def assignee_and_class_of_service_save_and_a_refusal_shows_its_limit(
    open_board, axe, live_api, owner, workflow, board, make_task
):
    alice = UserFactory(username="alice", first_name="Alice", last_name="Brown")  # may hold one task in progress
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER, wip_limit=1)
    backlog, doing, done = board
    alices = make_task(doing, "Alice's work", assignee_id=alice.pk)  # Alice is at her limit (1 of 1)
    fix = make_task(doing, "Fix the login")
    page = open_board(owner, workflow)

    card(page, fix).click()
    expect(field(page, "Assignee")).to_have_value("")
    expect(field(page, "Class of service")).to_have_value("standard")
    field(page, "Assignee").select_option(label="Alice Brown")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("alert")).to_have_text("alice is at their WIP limit (1 of 1).")
    assert task_now(live_api, fix)["assignee_id"] is None

    field(page, "Assignee").select_option(label="olivia")
    field(page, "Class of service").select_option(label="Expedite")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Saved.")
    saved = task_now(live_api, fix)
    assert (saved["assignee_id"], saved["class_of_service"]) == (owner.pk, "expedite")
    expect(card(page, fix).locator('[data-role="assignee-initials"]')).to_have_text("OL")
    expect(card(page, fix).locator('[data-role="expedite"]')).to_be_visible()
    expect(history(page).filter(has_text="Assigned to olivia")).to_have_count(1)
    expect(history(page).filter(has_text="Class of service: Expedite")).to_have_count(1)
    axe(page, "the task detail with its assignee and class")
    button(page, "Close").click()

    # The board's expedite limit is 1, and In Progress holds it now: Alice's work cannot be
    # expedited too.
    card(page, alices).click()
    field(page, "Class of service").select_option(label="Expedite")
    button(page, "Save").click()
    expect(dialog(page).get_by_role("alert")).to_have_text(
        "This board already has 1 expedite task in progress (limit 1)."
    )
    assert task_now(live_api, alices)["class_of_service"] == "standard"
    assert page.errors == []


def the_detail_says_why_a_task_waits_and_follows_the_board(
    open_board, axe, live_api, owner, workflow, grouped, make_task
):
    alice = UserFactory(username="alice", first_name="Alice", last_name="Brown")  # may hold one task in progress
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER, wip_limit=1)
    backlog, build, review, done, _ = grouped
    make_task(build, "Alice's build", assignee_id=alice.pk)  # Alice is at her limit
    reviewed = make_task(review, "Review the schema")  # the group is full
    alices = make_task(backlog, "Alice's next", assignee_id=alice.pk)
    make_task(backlog, "Idea 1")
    last = make_task(backlog, "Idea 2")
    page = open_board(owner, workflow)
    note = dialog(page).locator('[data-role="waiting-note"]')

    card(page, alices).click()
    expect(note).to_have_text(
        "Waiting: next for Build — held by group Development (2 of 2), alice's personal limit (1 of 1);"
        " skipped: assignee full"
    )
    waiting = task_now(live_api, alices)["waiting"]
    assert (waiting["state"], waiting["position"], waiting["skipped_because"]) == (
        "waiting_for_pull",
        1,
        "assignee_full",
    )
    assert [limit["scope"] for limit in waiting["held_by"]] == ["group", "person"]
    axe(page, "the task detail of a waiting task")
    shot(page, "task-detail-waiting")
    button(page, "Close").click()

    card(page, last).click()
    expect(note).to_have_text("Waiting: 2nd for Build — held by group Development (2 of 2)")
    # When the review is done, the group has room: Build passes Alice's task over (she is
    # full) and pulls Idea 1, so Idea 2 is next; the open dialog follows.
    assert live_api.post(f"/api/v1/tasks/{reviewed.pk}/move/", json={"step_id": str(done.pk)}).status_code == 200
    expect(note).to_have_text("Waiting: next for Build — held by group Development (2 of 2)")
    expect(column(page, build).locator(".card-title")).to_have_text(["Alice's build", "Idea 1"])
    assert task_now(live_api, last)["waiting"]["position"] == 1
    assert page.errors == []


def the_detail_lists_the_agent_sessions_and_starts_and_cancels_one(
    open_board, axe, live_api, owner, workflow, board, make_task
):
    backlog, doing, done = board
    task = make_task(doing, "Refactor the parser")
    page = open_board(owner, workflow)
    sessions = dialog(page).locator('[data-role="sessions"] li')

    card(page, task).click()
    expect(dialog(page).get_by_text("No agent has worked on this task.")).to_be_visible()
    button(page, "Start agent").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Agent started.")
    expect(sessions).to_have_count(1)
    expect(sessions.first.locator('[data-role="status-text"]')).to_have_text("Agent starting")
    expect(button(page, "Cancel")).to_be_focused()
    expect(button(page, "Start agent")).to_be_hidden()
    (session,) = live_api.get(f"/api/v1/sessions/?task={task.pk}").json()["results"]
    assert session["status"] == "starting"
    axe(page, "the task detail with an agent session")

    # A runner boots it elsewhere: the open dialog follows.
    assert live_api.post(f"/api/v1/sessions/{session['id']}/events/", json={"type": "boot_ready"}).status_code == 200
    expect(sessions.first.locator('[data-role="status-text"]')).to_have_text("Agent running")
    expect(button(page, "Cancel")).to_be_focused()  # the list was made anew around it

    button(page, "Cancel").click()
    expect(dialog(page).get_by_role("status").first).to_have_text("Agent session cancelled.")
    expect(sessions.first.locator('[data-role="status-text"]')).to_have_text("Agent cancelled")
    expect(button(page, "Start agent")).to_be_focused()
    assert live_api.get(f"/api/v1/sessions/{session['id']}/").json()["status"] == "cancelled"
    button(page, "Close").click()

    # A viewer sees the sessions, and neither button.
    viewer = UserFactory(username="vic")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    watching = open_board(viewer, workflow)
    card(watching, task).click()
    expect(dialog(watching).locator('[data-role="sessions"] li')).to_have_count(1)
    expect(dialog(watching).get_by_role("button", name="Start agent")).to_have_count(0)
    expect(dialog(watching).get_by_role("button", name="Cancel")).to_have_count(0)
    expect(dialog(watching).get_by_text("Assignee: nobody · Class of service: Standard")).to_be_visible()
    axe(watching, "the task detail as a viewer")
    assert page.errors == [] and watching.errors == []


def sessions_started_through_the_api_show_on_the_cards_and_in_the_header_live(
    open_board, axe, api, owner, workflow, agent_board, make_task
):
    backlog, doing, done = agent_board
    first, second = make_task(backlog, "Fix the login"), make_task(backlog, "Write the docs")
    plain = make_task(done, "Shipped")
    page = open_board(owner, workflow)
    expect(agents_header(page)).to_have_text("Agents: 0/1 running, 0 queued Workspace: 0 running, 0 queued")

    # When both are started by hand: one slot, so the second waits for it
    answers = [api.post(f"/api/v1/tasks/{task.pk}/sessions/", json={}).status_code for task in (first, second)]
    assert answers == [201, 202]  # started; queued
    expect(card_titled(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent waiting for a runner")
    expect(card_titled(page, "Write the docs").locator('[data-role="agent"]')).to_have_text("Agent queued (1st)")
    expect(agents_header(page)).to_have_text(
        "Agents: 0/1 running, 1 waiting for a runner, 1 queued Workspace: 0 running, 1 waiting for a runner, 1 queued"
    )
    expect(card_titled(page, "Shipped").locator('[data-role="agent"]')).to_be_hidden()
    assert [session_of(api, t)["status"] for t in (first, second)] == ["starting", "queued"]
    runner_note = page.locator('[data-role="runner-note"]')
    expect(runner_note).to_have_text("No runner has been seen in this workspace: start one to run these sessions.")
    axe(page, "the board with agents")

    # When a runner asks for work, it claims the first and boots it: the note goes; then the
    # first fails and the second gets the slot
    claimed = api.post("/api/v1/sessions/claim/", json={"runner": "laptop"})
    assert claimed.status_code == 200 and claimed.json()["task"]["id"] == str(first.pk)
    assert api.get(f"/api/v1/workspaces/{workflow.workspace_id}/").json()["runner_seen_at"] is not None
    expect(agents_header(page)).to_have_text("Agents: 1/1 running, 1 queued Workspace: 1 running, 1 queued")
    expect(card_titled(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent starting")
    expect(runner_note).to_be_hidden()
    report(api, session_of(api, first), "boot_ready")
    expect(card_titled(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent running")
    expect(card_titled(page, "Fix the login").locator('[data-role="agent"]')).to_have_attribute(
        "data-status", "running"
    )
    shot(page, "board-agents-running-and-queued")
    report(api, session_of(api, first), "failed")
    expect(card_titled(page, "Fix the login").locator('[data-role="agent"]')).to_have_text("Agent failed")
    expect(card_titled(page, "Write the docs").locator('[data-role="agent"]')).to_have_text(
        "Agent waiting for a runner"
    )
    expect(agents_header(page)).to_have_text(
        "Agents: 0/1 running, 1 waiting for a runner, 0 queued Workspace: 0 running, 1 waiting for a runner, 0 queued"
    )
    assert [session_of(api, t)["status"] for t in (first, second)] == ["failed", "starting"]
    expect(runner_note).to_be_hidden()  # a runner asked for work a moment ago
    agents = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()["agents"]
    assert (agents["running"], agents["unclaimed"]) == (0, 1)  # no runner has claimed it
    axe(page, "the board with a failed agent")
    assert plain and page.errors == []


def a_step_s_agents_queue_in_line_and_move_up_live(open_board, api, owner, workflow, agent_board, make_task):
    backlog, doing, done = agent_board
    workflow.workspace.max_concurrent_sessions = 4
    workflow.workspace.save()
    doing.events, doing.wip_limit = AUTO_START, 0  # every task it admits starts an agent, or queues one
    doing.save()
    tasks = [make_task(doing, title) for title in ("Alpha", "Bravo", "Charlie", "Delta")]
    page = open_board(owner, workflow)
    expect(page.locator('[data-role="agent"]:visible')).to_have_text(
        ["Agent waiting for a runner", "Agent queued (1st)", "Agent queued (2nd)", "Agent queued (3rd)"]
    )
    expect(agents_header(page)).to_have_text(
        "Agents: 0/1 running, 1 waiting for a runner, 3 queued Workspace: 0/4 running, 1 waiting for a runner, 3 queued"
    )

    # When Alpha's turn completes, everyone behind it moves up one place
    report(api, session_of(api, tasks[0]), "boot_ready")
    report(api, session_of(api, tasks[0]), "turn_completed")
    expect(page.locator('[data-role="agent"]:visible')).to_have_text(
        ["Agent waiting for a runner", "Agent queued (1st)", "Agent queued (2nd)"]
    )
    expect(card_titled(page, "Bravo").locator('[data-role="agent"]')).to_have_text("Agent waiting for a runner")
    expect(card_titled(page, "Alpha").locator('[data-role="agent"]')).to_be_hidden()
    assert [session_of(api, t)["status"] for t in tasks] == ["completed", "starting", "queued", "queued"]
    shot(page, "board-agents-queue")

    narrow = open_board(owner, workflow)
    narrow.set_viewport_size({"width": 390, "height": 844})
    expect(agents_header(narrow)).to_be_visible()
    card_titled(narrow, "Charlie").scroll_into_view_if_needed()  # the columns scroll sideways
    shot(narrow, "board-agents-narrow")
