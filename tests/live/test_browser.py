"""The live board in headless Chromium against a real uvicorn server (product.md §7)."""

import json
import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connection
from playwright.sync_api import expect

from accounts.models import ApiToken
from boards.admission import task_create
from boards.models import Priority, Task
from boards.structure import step_update
from tests.factories import MembershipFactory, UserFactory
from tests.servers import eventually
from workflows.models import Role, WorkflowStep

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

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


@pytest.fixture
def make_task(owner):
    def make(step, title="Task", **kwargs):
        actor = kwargs.pop("actor", owner)
        return off_loop(task_create, workflow=step.workflow, step=step, actor=actor, title=title, **kwargs).task

    return make


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


def without_feeder(step):
    """Make the step pull from no feeder, so the board is settled with cards waiting in
    Backlog beside its free capacity (built directly: a board layout, not a change to watch)."""
    WorkflowStep.objects.filter(pk=step.pk).update(pull_from_step=None)
    step.pull_from_step = None


def version(page):
    return page.locator("#board")


def step_of(task):
    return Task.objects.get(pk=task.pk).step_id


def test_login_form_leads_to_the_boards_and_logout(chromium, board_server, owner, workflow, board):
    # The server runs the production hashers, not the fast one the tests configure.
    hasher = PBKDF2PasswordHasher()
    owner.password = hasher.encode("a real passphrase", hasher.salt())
    owner.save(update_fields=["password"])
    context = chromium.new_context()
    page = context.new_page()
    page.goto(f"{board_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.fill("#id_username", owner.username)
    page.fill("#id_password", "wrong")
    page.click("button[type=submit]")
    expect(page.locator(".form-error[role=alert]")).to_be_visible()
    page.fill("#id_password", "a real passphrase")
    page.click("button[type=submit]")
    expect(page.locator(".workspace h2")).to_contain_text(workflow.workspace.name)
    page.click(f"text={workflow.name}")
    expect(page).to_have_url(f"{board_server.url}/workflows/{workflow.pk}/")
    expect(page.locator(".column h2")).to_have_text(["Backlog", "In Progress", "Done"])
    page.click("text=Log out")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    context.close()


def test_header_counts_cards_and_queue_area(open_board, owner, workflow, board, make_task):
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


def test_refused_drag_rolls_back_and_shows_the_conflict(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "Busy 1")
    make_task(doing, "Busy 2")
    ideas = [make_task(backlog, f"Idea {n}") for n in range(3)]  # In Progress is full: they wait
    page = open_board(owner, workflow)

    drag(page, ideas[1], doing)

    expect(page.get_by_role("alert")).to_contain_text(FULL)
    expect(titles(page, backlog)).to_have_text(["Idea 0", "Idea 1", "Idea 2"])
    expect(titles(page, doing)).to_have_text(["Busy 1", "Busy 2"])
    expect(column(page, doing).locator('[data-role="wip-count"]')).to_have_text("2/2")
    assert step_of(ideas[1]) == backlog.pk
    expect(version(page)).to_have_attribute("data-version", "5")


def test_network_error_rolls_back_with_its_own_message(open_board, owner, workflow, board, make_task):
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


def test_accepted_drag_moves_the_card_and_the_pull_follows(open_board, owner, workflow, board, make_task):
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


def test_drag_into_a_full_queue_mode_step_lands_in_its_queue(open_board, owner, workflow, board, make_task):
    backlog, doing, done = board
    review = WorkflowStep.objects.create(workflow=workflow, name="Review", position=3, wip_limit=1, on_full="queue")
    make_task(review, "Under review")
    idea = make_task(backlog, "Idea")
    page = open_board(owner, workflow)
    queue = column(page, review).locator('[data-role="queue"]')
    expect(queue.locator('[data-role="queue-count"]')).to_have_text("0")

    drag(page, idea, review)

    expect(queue.locator(".card-title")).to_have_text(["Idea"])
    expect(queue.locator('[data-role="queue-count"]')).to_have_text("1")
    expect(titles(page, review)).to_have_text(["Under review"])
    expect(column(page, review).locator('[data-role="wip-count"]')).to_have_text("1/1")
    expect(page.get_by_role("alert")).to_be_hidden()
    assert Task.objects.get(pk=idea.pk).admitted is False


def test_second_viewer_sees_the_move_and_the_pull_live(open_board, owner, workflow, board, make_task):
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


def test_over_limit_warning_is_not_colour_alone_and_clears_live(open_board, owner, workflow, board, make_task):
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


def test_keyboard_move_between_and_within_columns(open_board, owner, workflow, board, make_task):
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


def test_reorders_show_the_mover_and_a_viewer_the_servers_order_through_a_rebalance(
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


def test_creating_into_a_full_step_shows_the_conflict_and_creates_nothing(
    open_board, owner, workflow, board, make_task
):
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


def test_step_settings_show_field_errors_and_save(open_board, owner, workflow, board):
    backlog, doing, done = board
    page = open_board(owner, workflow)
    page.click("text=Step settings")
    # Each page is used once its load event has run its (deferred) module script; a form sent
    # before that would be submitted natively.
    page.wait_for_url(f"**/workflows/{workflow.pk}/settings/")
    doing_form = page.locator(f'form[data-step-id="{doing.pk}"]')

    doing_form.locator("input[name=wip_limit]").fill("-1")
    doing_form.locator("button[type=submit]").click()
    wip_error = doing_form.locator('[data-error-for="wip_limit"]')
    expect(wip_error).to_contain_text("greater than or equal to 0")
    expect(doing_form.locator("input[name=wip_limit]")).to_have_attribute("aria-invalid", "true")

    backlog_form = page.locator(f'form[data-step-id="{backlog.pk}"]')
    backlog_form.locator("select[name=pull_from_step_id]").select_option(label="In Progress")
    backlog_form.locator("button[type=submit]").click()
    expect(backlog_form.locator('[data-error-for="pull_from_step_id"]')).not_to_be_empty()
    assert WorkflowStep.objects.get(pk=doing.pk).wip_limit == 2
    assert WorkflowStep.objects.get(pk=backlog.pk).pull_from_step_id is None

    backlog_form.locator("select[name=pull_from_step_id]").select_option(label="No feeder step")
    backlog_form.locator("input[name=is_start_step]").uncheck()
    backlog_form.locator("button[type=submit]").click()
    expect(backlog_form.locator('[data-error-for="is_start_step"]')).to_contain_text("Choose another start step")
    assert WorkflowStep.objects.get(pk=backlog.pk).is_start_step

    doing_form.locator("input[name=wip_limit]").fill("3")
    doing_form.locator("input[name=name]").fill("Doing")
    doing_form.locator("select[name=pull_from_step_id]").select_option(label="No feeder step")
    doing_form.locator("select[name=on_full]").select_option("queue")
    doing_form.locator("button[type=submit]").click()
    expect(page.locator(f'form[data-step-id="{doing.pk}"] h2')).to_have_text("2. Doing")
    page.wait_for_load_state()
    saved = WorkflowStep.objects.get(pk=doing.pk)
    assert (saved.name, saved.wip_limit, saved.on_full) == ("Doing", 3, "queue")
    assert saved.pull_from_step_id is None

    new_form = page.locator('form[data-role="new-step-form"]')
    new_form.locator("input[name=name]").fill("Review")
    new_form.locator("input[name=wip_limit]").fill("1")
    new_form.locator("button[type=submit]").click()
    expect(page.locator('form[data-role="step-form"] h2')).to_have_text(
        ["1. Backlog", "2. Doing", "3. Done", "4. Review"]
    )
    page.wait_for_load_state()
    review_form = page.locator('form[data-role="step-form"]').nth(3)
    review_form.locator('button[data-action="up"]').click()
    expect(page.locator('form[data-role="step-form"] h2')).to_have_text(
        ["1. Backlog", "2. Doing", "3. Review", "4. Done"]
    )
    page.wait_for_load_state()
    page.on("dialog", lambda dialog: dialog.accept())
    forms = page.locator('form[data-role="step-form"]')
    forms.nth(2).locator('button[data-action="delete"]').click()
    expect(forms.locator("h2")).to_have_text(["1. Backlog", "2. Doing", "3. Done"])
    assert list(WorkflowStep.objects.filter(workflow=workflow).values_list("name", flat=True)) == [
        "Backlog",
        "Doing",
        "Done",
    ]


def test_viewers_watch_but_cannot_move_or_open_settings(board_server, open_board, workflow, board, make_task):
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


def server_api(board_server, user) -> httpx.Client:
    """Writes through the running server, so its viewers are told (unlike writes made here)."""
    _, key = ApiToken.issue(user=user)
    return httpx.Client(base_url=board_server.url, headers={"Authorization": f"Token {key}"})


def test_a_version_gap_makes_the_board_refetch(board_server, open_board, owner, workflow, board, make_task):
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


def test_a_step_added_live_gets_the_column_and_cards_the_server_renders(
    board_server, open_board, owner, workflow, board
):
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


def test_after_a_reconnect_the_board_shows_what_was_missed(board_server, open_board, owner, workflow, board, make_task):
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


def test_every_page_passes_axe_as_a_person_goes_through_them(
    chromium, board_server, axe, owner, workflow, board, make_task
):
    backlog, doing, done = board
    make_task(doing, "Fix the login")
    make_task(doing, "Fix the logout")
    for priority in Priority:  # every priority's colours (waiting: In Progress is full)
        make_task(backlog, f"A {priority.label} one", priority=priority)
    off_loop(step_update, step=doing, actor=owner, wip_limit=1)  # an over-limit column
    queued = WorkflowStep.objects.create(workflow=workflow, name="Review", position=3, wip_limit=1, on_full="queue")
    make_task(queued, "Reviewed first")
    make_task(queued, "Waits in line")
    hasher = PBKDF2PasswordHasher()
    owner.password = hasher.encode("a real passphrase", hasher.salt())
    owner.save(update_fields=["password"])
    context = chromium.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.goto(f"{board_server.url}/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    axe(page, "the login page")
    page.get_by_label("Username").fill(owner.username)
    page.get_by_label("Password").fill("a real passphrase")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name=workflow.workspace.name)).to_be_visible()
    axe(page, "the home page")

    page.get_by_role("link", name=workflow.name).click()
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    axe(page, "the board")

    page.get_by_role("link", name="Step settings").click()
    expect(page.get_by_role("heading", name=f"Steps of {workflow.name}")).to_be_visible()
    page.wait_for_load_state()
    axe(page, "the step settings")

    page.get_by_role("link", name=workflow.name).click()
    page.get_by_role("link", name="Flow").click()
    page.wait_for_selector('[data-role="live"][data-state="live"]')
    axe(page, "the flow page")

    page.goto(f"{board_server.url}/workflows/{workflow.pk}/")
    page.get_by_role("link", name="Members").click()
    expect(page.get_by_role("heading", name=f"Members of {workflow.workspace.name}")).to_be_visible()
    page.get_by_role("button", name="Invite").click()
    link = page.get_by_label("New invite link (shown once; single use)")
    expect(link).to_be_visible()
    axe(page, "the members page")

    newcomer = chromium.new_context(viewport={"width": 390, "height": 844})
    invited = newcomer.new_page()
    invited.goto(link.input_value())
    expect(invited.get_by_role("button", name="Sign up and join")).to_be_visible()
    axe(invited, "the invite page")
    newcomer.close()
    context.close()
