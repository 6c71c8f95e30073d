"""The limits on the board in headless Chromium (product.md §2b, §7): cards name their
assignee, mark expedite work and say why they wait, live; the filter bar hides by assignee
and class. Changes go through the running server's API, as people and other doors make
them; outcomes are read back there."""

import pytest
from playwright.sync_api import expect

from boards.admission import task_create
from tests.factories import MembershipFactory, UserFactory, development_board
from tests.live.test_agents_board import shot
from tests.live.test_browser import card, column, drag, off_loop, version
from workflows.models import Role, WorkflowStep

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def make_task(owner):
    def make(step, title, **kwargs):
        return off_loop(task_create, workflow=step.workflow, step=step, actor=owner, title=title, **kwargs).task

    return make


@pytest.fixture
def alice(workflow):
    user = UserFactory(username="alice", first_name="Alice", last_name="Brown")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    return user


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


def test_cards_show_assignee_expedite_and_why_they_wait_as_the_api_says_through_changes(
    open_board, axe, live_api, owner, alice, workflow, board, make_task
):
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
    expect(card(page, ideas[2]).locator('[data-role="agent"]')).to_have_text("Agent starting")
    expect(card(page, ideas[1]).locator('[data-role="waiting"]')).to_have_text("next for In Progress")
    board_now = api_board(live_api, workflow)
    assert shown_labels(page, board_now) == expected_labels(page, board_now)
    assert page.errors == []


def test_the_filter_bar_hides_by_assignee_and_class_but_the_counts_stay(
    open_board, live_api, owner, alice, workflow, board, make_task
):
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


@pytest.fixture
def grouped(workflow, owner):
    return off_loop(development_board, workflow, owner)


def band(page, name):
    return page.get_by_role("group", name=name, exact=True)


def test_a_group_s_band_shows_its_count_over_its_columns_live(
    open_board, axe, live_api, owner, alice, workflow, grouped, make_task
):
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
