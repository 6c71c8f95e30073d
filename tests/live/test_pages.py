"""The server-rendered pages: who sees what, and the hooks the board script relies on."""

import pytest
from django.test import Client

from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role
from workflows.services import step_update

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


def test_board_page_renders_columns_counts_and_over_limit_state(owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "One")
    make_task(doing, "Two")
    step_update(step=doing, actor=owner, wip_limit=1)
    body = signed_in(owner).get(f"/workflows/{workflow.pk}/").content.decode()
    assert body.index(f'data-step-id="{backlog.pk}"') < body.index(f'data-step-id="{doing.pk}"')
    assert f'data-step-id="{doing.pk}" data-over-limit="true"' in body
    assert f'data-step-id="{backlog.pk}" data-over-limit="false"' in body
    assert 'aria-label="2 of 1: over the WIP limit"' in body
    assert ">2/1</span>" in body
    assert 'data-role="wip-count" aria-label="0 tasks" title="0 tasks">0</span>' in body
    assert 'id="board-alert" class="alert" role="alert"' in body
    assert body.count('class="card priority-medium"') == 2


def test_logout_is_a_post_that_ends_the_session(owner):
    client = signed_in(owner)
    assert client.post("/accounts/logout/").status_code == 302
    assert client.get("/").status_code == 302
