"""The activity feed: a board's and a workspace's history and comments, newest first, a page
at a time, filtered, and only of boards the reader may see."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from boards import admission
from boards.comments import comment_create
from boards.services import task_block
from tests.clients import api_for
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from tests.factories import board as build_board
from workflows.models import Role


def feed(client, url, **params):
    response = client.get(url, params)
    assert response.status_code == 200, response.content
    return response.json()


def every_page(client, url, **params):
    items, page = [], feed(client, url, **params)
    while True:
        items += page["results"]
        if page["next"] is None:
            return items
        page = client.get(page["next"]).json()


@pytest.fixture
def board(workflow):
    """Backlog -> In Progress (limit 2, no pull) -> Done."""
    return build_board(workflow, pulls="none")


@pytest.fixture
def story(board, make_task, owner, workflow):
    """Olivia creates a task, Max comments on it mentioning her, she moves it, blocks it."""
    backlog, doing, _ = board
    max_ = UserFactory(username="max")
    MembershipFactory(workspace=workflow.workspace, user=max_, role=Role.MEMBER)
    task = make_task(backlog, "Ship it")
    comment_create(task=task, author=max_, body="@olivia ready?")
    admission.task_move(task=task, to_step=doing, actor=owner)
    task_block(task=task, actor=owner, reason="waiting on ops")
    return task, max_


def test_the_board_feed_is_newest_first_with_comments_among_the_history(story, workflow, api):
    task, _ = story

    items = feed(api, f"/api/v1/workflows/{workflow.pk}/activity/")["results"]

    assert [(i["kind"], i["actor"]) for i in items] == [
        ("blocked", "olivia"),
        ("moved", "olivia"),
        ("comment", "max"),
        ("created", "olivia"),
    ]
    moved, comment = items[1], items[2]
    assert (moved["task_title"], moved["event"]["from_step_name"], moved["event"]["to_step_name"]) == (
        "Ship it",
        "Backlog",
        "In Progress",
    )
    assert comment["comment"]["body"] == "@olivia ready?"
    assert comment["comment"]["mentions"] == ["olivia"]
    assert {i["task_id"] for i in items} == {str(task.pk)}


def test_pages_follow_each_other_without_gap_or_repeat(story, workflow, api, make_task, owner, board):
    for n in range(7):
        comment_create(task=make_task(board[0], f"t{n}"), author=owner, body=f"note {n}")
    url = f"/api/v1/workflows/{workflow.pk}/activity/"
    whole = feed(api, url, page_size=100)["results"]

    paged = every_page(api, url, page_size=3)

    assert len(whole) == 4 + 7 * 2
    assert [i["id"] for i in paged] == [i["id"] for i in whole]
    instants = [i["at"] for i in whole]
    assert instants == sorted(instants, reverse=True)


@pytest.mark.parametrize(
    ("params", "kinds"),
    [
        ({"kind": "comment"}, ["comment"]),
        ({"kind": "moved"}, ["moved"]),
        ({"person": "max"}, ["comment"]),
        ({"mentions": "olivia"}, ["comment"]),
        ({"person": "olivia", "kind": "blocked"}, ["blocked"]),
    ],
)
def test_filters(story, workflow, api, params, kinds):
    users = {"max": story[1].pk, "olivia": api.handler._force_user.pk}
    params = {k: users.get(v, v) if k in ("person", "mentions") else v for k, v in params.items()}

    items = feed(api, f"/api/v1/workflows/{workflow.pk}/activity/", **params)["results"]

    assert [i["kind"] for i in items] == kinds


def test_the_task_filter_keeps_one_tasks_story(story, workflow, api, make_task, board, owner):
    other = make_task(board[0], "Other")
    comment_create(task=other, author=owner, body="elsewhere")

    items = feed(api, f"/api/v1/workflows/{workflow.pk}/activity/", task=str(story[0].pk))["results"]

    assert len(items) == 4
    assert {i["task_title"] for i in items} == {"Ship it"}


@pytest.mark.parametrize(
    "params",
    [{"kind": "teleported"}, {"person": "x"}, {"task": "nope"}, {"cursor": "garbage"}, {"page_size": 0}, {"q": "a"}],
)
def test_bad_parameters_are_400s(story, workflow, api, params):
    response = api.get(f"/api/v1/workflows/{workflow.pk}/activity/", params)
    assert response.status_code == 400
    assert set(response.json()["errors"]) == set(params)


def test_the_workspace_feed_has_every_board_of_it_and_nothing_of_another(story, workflow, api, owner):
    second = WorkflowFactory(workspace=workflow.workspace, name="Ops")
    elsewhere = WorkflowFactory(name="Secret")
    MembershipFactory(workspace=elsewhere.workspace, user=UserFactory(username="zed"), role=Role.OWNER)
    for other in (second, elsewhere):
        backlog = build_board(other, pulls="none")[0]
        task = admission.task_create(workflow=other, step=backlog, actor=owner, title=f"{other.name} task").task
        comment_create(task=task, author=owner, body=f"on {other.name}")

    items = every_page(api, f"/api/v1/workspaces/{workflow.workspace_id}/activity/", page_size=2)

    assert {i["workflow_id"] for i in items} == {str(workflow.pk), str(second.pk)}
    assert "Secret task" not in {i["task_title"] for i in items}
    assert len(items) == 4 + 2


def test_outsiders_get_404_and_viewers_read(story, workflow):
    stranger = api_for(UserFactory(username="sam"))
    viewer = UserFactory(username="vera")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)

    assert stranger.get(f"/api/v1/workflows/{workflow.pk}/activity/").status_code == 404
    assert stranger.get(f"/api/v1/workspaces/{workflow.workspace_id}/activity/").status_code == 404
    assert len(feed(api_for(viewer), f"/api/v1/workspaces/{workflow.workspace_id}/activity/")["results"]) == 4


def test_a_page_costs_the_same_queries_whatever_its_size(story, workflow, api, make_task, board, owner):
    for n in range(12):
        task = make_task(board[0], f"t{n}")
        comment_create(task=task, author=owner, body=f"@olivia note {n}")

    def queries(size):
        with CaptureQueriesContext(connection) as captured:
            page = feed(api, f"/api/v1/workspaces/{workflow.workspace_id}/activity/", page_size=size)
        assert len(page["results"]) == size
        return len(captured)

    assert queries(2) == queries(20)


def test_the_feed_pages_are_for_members_only(story, workflow, owner):
    pages = (f"/workflows/{workflow.pk}/activity/", f"/workspaces/{workflow.workspace_id}/activity/")
    member, stranger = Client(), Client()
    member.force_login(owner)
    stranger.force_login(UserFactory(username="sam"))

    for path in pages:
        assert Client().get(path)["Location"].startswith("/accounts/login/")
        assert stranger.get(path).status_code == 404
        page = member.get(path)
        assert page.status_code == 200
        assert f"Activity of {workflow.name if 'workflows' in path else workflow.workspace.name}" in page.text
