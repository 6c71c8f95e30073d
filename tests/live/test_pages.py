"""The server-rendered pages: who sees what, and the hooks the board script relies on."""

import json
import re
from html.parser import HTMLParser

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from boards.admission import task_create
from boards.models import Priority
from boards.structure import group_create, lane_create, step_update
from boards.views import people
from flow.models import ServiceLevel
from tests import factories
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role
from workflows.step_rules import ACTION_TYPES

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_home_lists_only_the_users_workspaces_and_boards(owner, workflow, board):
    WorkflowFactory(name="Someone else's board")
    body = signed_in(owner).get("/").content.decode()
    assert workflow.workspace.name in body
    assert f'href="/workflows/{workflow.pk}/"' in body
    assert "Someone else&#x27;s board" not in body


def test_pages_need_a_login(workflow):
    for path in ("/", f"/workflows/{workflow.pk}/", f"/workflows/{workflow.pk}/settings/"):
        response = Client().get(path)
        assert response.status_code == 302
        assert response["Location"].startswith("/accounts/login/")


def test_non_members_get_404_and_viewers_403_on_settings(workflow, board):
    stranger = signed_in(UserFactory(username="sam"))
    assert stranger.get(f"/workflows/{workflow.pk}/").status_code == 404
    assert stranger.get(f"/workflows/{workflow.pk}/settings/").status_code == 404
    viewer = UserFactory(username="vic")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    assert signed_in(viewer).get(f"/workflows/{workflow.pk}/").status_code == 200
    assert signed_in(viewer).get(f"/workflows/{workflow.pk}/settings/").status_code == 403


def test_board_page_carries_the_board_as_data_and_renders_no_card_itself(owner, workflow, board, make_task):
    """The script builds the columns and cards, and writes their words, from the page's board
    data and its <template> partials (the browser tests read what it shows)."""
    backlog, doing, done = board
    alice = UserFactory(username="alice", first_name="Alice", last_name="Brown")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER)
    make_task(doing, "One", assignee_id=alice.pk)
    make_task(doing, "Two")
    step_update(step=doing, actor=owner, wip_limit=1)
    group = group_create(workflow=workflow, actor=owner, name="Shipping", wip_limit=1, step_ids=[doing.pk, done.pk])
    body = signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode()
    page = Tags(body)
    data = page.data["board-data"]
    assert [s["id"] for s in data["steps"]] == [str(backlog.pk), str(doing.pk), str(done.pk)]
    assert [(t["title"], t["assignee_id"]) for t in data["steps"][1]["tasks"]] == [("One", alice.pk), ("Two", None)]
    assert (data["steps"][1]["occupied"], data["steps"][1]["over_limit"]) == (2, True)
    assert [(g["id"], g["over_limit"]) for g in data["groups"]] == [(str(group.pk), True)]
    assert re.search(r'<div class="board" id="board"[^>]*></div>', body)
    assert 'id="board-alert" class="alert" role="alert"' in body
    templates = {attrs["id"] for tag, attrs in page.tags if tag == "template"}
    assert {"column-template", "group-template", "card-template"} <= templates
    assert [tag for tag, attrs in page.tags if "card" in (attrs.get("class") or "").split()] == ["li"]  # the template's
    assert [(p["username"], p["name"], p["assignable"]) for p in page.data["people"]] == [
        ("alice", "Alice Brown", True),
        ("olivia", "olivia", True),
    ]


def test_board_page_carries_the_service_levels_once_and_each_card_its_start(owner, workflow, board, make_task):
    """Each card's age against its SLE is drawn from its own `started_at` and the page's
    service levels (read once, whatever the cards: no query per card)."""
    backlog, doing, done = board
    make_task(doing, "Started")
    make_task(doing, "Also started")  # In Progress is full (limit 2): it pulls nothing
    make_task(backlog, "Waiting")
    ServiceLevel.objects.create(workflow=workflow, class_of_service="standard", days=9)
    page = Tags(signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode())
    assert page.data["service-levels"] == {"standard": 9, "expedite": None}
    started = {t["title"]: t["started_at"] for s in page.data["board-data"]["steps"] for t in s["tasks"]}
    assert started["Started"] is not None and started["Waiting"] is None
    assert any(attrs.get("data-role") == "sle" for _, attrs in page.tags)  # the card template's


def test_the_board_page_carries_what_a_move_s_preview_judges_limits_by(owner, workflow, board, make_task):
    """The board's expedite allowance, and each person's WIP limit and their counted work on the
    workspace's other boards (static/board/limits.js adds this board's own), read with the
    people in one query."""
    backlog, doing, done = board
    alice = UserFactory(username="alice")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER, wip_limit=3)
    other_board = factories.board(WorkflowFactory(workspace=workflow.workspace), pulls="none")
    other_backlog, other_doing, other_done = other_board
    make_task(other_doing, "There", assignee_id=alice.pk)  # counted
    make_task(other_backlog, "Not started", assignee_id=alice.pk)  # not in an active step
    make_task(other_done, "Finished", assignee_id=alice.pk)
    make_task(other_doing, "Ephemeral", assignee_id=alice.pk, is_ephemeral=True)
    make_task(doing, "Here", assignee_id=alice.pk)  # this board's: the page counts its own cards
    elsewhere = factories.board(WorkflowFactory())  # another workspace
    MembershipFactory(workspace=elsewhere[0].workflow.workspace, user=alice, role=Role.MEMBER)
    make_task(elsewhere[1], "Other team", assignee_id=alice.pk, actor=alice)

    page = Tags(signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode())

    assert page.data["board-data"]["workflow"]["expedite_limit"] == workflow.expedite_limit
    assert [(p["username"], p["wip_limit"], p["elsewhere"]) for p in page.data["people"]] == [
        ("alice", 3, 1),
        ("olivia", 0, 0),
    ]
    with CaptureQueriesContext(connection) as queries:
        people(workflow.workspace_id, board=workflow)
    assert len(queries) == 1


class Tags(HTMLParser):
    """Every start tag of a page (<template> contents included), and the text of its data blocks."""

    def __init__(self, html: str):
        super().__init__()
        self.tags, self.data, self._open = [], {}, None
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._open = dict(attrs).get("id") if tag == "script" else None

    def handle_endtag(self, tag):
        self._open = None

    def handle_data(self, data):
        if self._open:
            self.data[self._open] = json.loads(data)


def test_pages_have_no_inline_script_handler_or_style(owner, workflow, board, make_task):
    """What a strict Content Security Policy refuses; JSON data blocks are not scripts."""
    make_task(board[1], "Busy")
    pages = [Client().get("/accounts/login/")] + [
        signed_in(owner).get(path)
        for path in (
            "/",
            f"/workflows/{workflow.pk}/",
            f"/workflows/{workflow.pk}/settings/",
            f"/workflows/{workflow.pk}/archive/",
        )
    ]
    for response in pages:
        assert response.status_code == 200
        tags = Tags(response.content.decode()).tags
        for tag, attrs in tags:
            assert not [name for name in attrs if name.startswith("on") or name == "style"], tag
            assert not any((v or "").strip().lower().startswith("javascript:") for v in attrs.values())
            if tag == "script":
                assert attrs.get("src") or attrs.get("type") == "application/json", attrs
    board_tags = Tags(pages[2].content.decode()).tags
    modules = [a["src"] for t, a in board_tags if t == "script" and a.get("type") == "module"]
    # The header's bell (every signed-in page), then the board's one entry point.
    assert [re.sub(r"\.[0-9a-f]{12}\.", ".", src) for src in modules] == [
        "/static/site/bell.js",
        "/static/board/board.js",
    ]


def test_board_page_takes_its_priorities_from_the_enum(owner, workflow, board):
    backlog, doing, done = board
    page = Tags(signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode())
    assert page.data["priority-ranks"] == {p.label: p.value for p in Priority}
    options = [attrs for tag, attrs in page.tags if tag == "option"]
    # The filter bar ("Any" first, then its Blocked, Assignee, Class, Label and Due filters),
    # then the task dialog and the column template (the script's columns are its clones), each
    # with every priority in rank order; the dialog selects the open task's, and has its
    # Assignee (filled by the script), Class of service, a block's Type ("No type"; the
    # script adds the workspace's) and a link's relation.
    ranks = [p.label for p in Priority]
    filters = ["", "blocked", "unblocked", "", "none", str(owner.pk), "", "standard", "expedite"]
    filters += ["", "", "overdue", "week", "none"]
    dialog = [*ranks, "", "standard", "expedite", "", "blocked_by_task_id", "blocks_task_id"]
    assert [o["value"] for o in options] == ["", *ranks, *filters] + dialog + ranks
    assert [o["value"] for o in options if "selected" in o] == [Priority.MEDIUM.label]


def test_board_page_data_carries_the_groups_and_each_steps_group(owner, workflow, board):
    backlog, doing, done = board
    group = group_create(workflow=workflow, actor=owner, name="Flow", wip_limit=4, step_ids=[doing.pk, done.pk])

    data = Tags(signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode()).data["board-data"]

    assert [(g["id"], g["name"], g["wip_limit"], g["occupied"]) for g in data["groups"]] == [
        (str(group.pk), "Flow", 4, 0)
    ]
    assert [s["group_id"] for s in data["steps"]] == [None, str(group.pk), str(group.pk)]


def test_every_list_of_cards_names_its_step(owner, workflow, board):
    """In the column the script clones for each step, where it puts the step's id."""
    body = signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode()
    assert 'data-role="cards" data-step-id="{id}"' in body
    assert 'data-role="queued-cards" data-step-id="{id}"' in body


def test_logout_is_a_post_that_ends_the_session(owner):
    client = signed_in(owner)
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302


def test_the_events_editor_offers_each_event_exactly_the_actions_the_engine_allows(owner, workflow, board):
    response = signed_in(owner).get(f"/workflows/{workflow.pk}/settings/")
    for step in [*response.context["steps"], response.context["new_step"]]:
        offered = {events["key"]: {kind for kind, _ in events["choices"]} for events in step["event_lists"]}
        assert offered == ACTION_TYPES
    body = response.content.decode()
    assert "Start an agent" in body and "Move to step …" in body
    assert "<textarea" not in body


def test_a_task_link_opens_its_own_board_only(owner, workflow, board):
    backlog, _, _ = board
    task = task_create(workflow=workflow, step=backlog, actor=owner, title="Write the brief").task
    other = WorkflowFactory(name="Another board")
    MembershipFactory(workspace=other.workspace, user=owner, role=Role.OWNER)
    client = signed_in(owner)

    body = client.get(f"/workflows/{workflow.pk}/tasks/{task.pk}/").content.decode()
    assert f'data-open-task-id="{task.pk}"' in body
    assert 'id="task-dialog"' in body
    # The owner may see both boards, but a task opens only on its own board; an unknown id
    # and a non-member get the same 404.
    assert client.get(f"/workflows/{other.pk}/tasks/{task.pk}/").status_code == 404
    assert client.get(f"/workflows/{workflow.pk}/tasks/{other.pk}/").status_code == 404
    stranger = signed_in(UserFactory(username="sam"))
    assert stranger.get(f"/workflows/{workflow.pk}/tasks/{task.pk}/").status_code == 404


def test_a_title_that_closes_a_script_stays_data_in_the_board_page(owner, workflow, board, make_task):
    """The page's board data (orjson, `data_script`) escapes what could end its <script>."""
    title = "</script><script>window.pwned = 1</script> & <!-- Ünïcode"
    task = make_task(board[0], title)
    body = signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode()
    assert "</script><script>window.pwned" not in body
    tags = Tags(body)
    assert [tag for tag, attrs in tags.tags if tag == "script" and "src" not in attrs] == ["script"] * 4
    cards = {t["id"]: t["title"] for step in tags.data["board-data"]["steps"] for t in step["tasks"]}
    assert cards[str(task.pk)] == title


def test_the_flow_page_offers_a_lane_only_on_a_board_with_several(owner, workflow, board):
    path = f"/workflows/{workflow.pk}/flow/"
    assert 'id="flow-lane"' not in signed_in(owner).get(path).content.decode()
    lane_create(workflow=workflow, actor=owner, name="Expedite <fast>")
    body = signed_in(owner).get(path).content.decode()
    select = body[
        body.index('<label for="flow-lane">Lane</label>') : body.index("</select>", body.index('id="flow-lane"'))
    ]
    assert '<option value="">All lanes</option>' in select
    assert [name for _, name in re.findall(r'<option value="([0-9a-f-]+)">([^<]*)</option>', select)] == [
        "Default",
        "Expedite &lt;fast&gt;",
    ]
    assert 'id="flow-lane-rule"' in body  # the current-lane rule, beside the select
