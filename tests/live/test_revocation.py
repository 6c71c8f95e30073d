"""Losing access closes open board sockets: membership removed, role lowered
below what may watch, user deactivated, token revoked, session logged out. Each closes the
user's sockets with 4403 within 5 s and nothing more is sent; sockets that keep access stay."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from rest_framework.test import APIClient

from accounts.models import ApiToken
from boards import consumers
from boards.admission import task_create
from kandev.asgi import application
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db(transaction=True)
HOST = [(b"host", b"testserver"), (b"origin", b"http://testserver")]
CLOSED = {"type": "websocket.close", "code": 4403}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def by_session(workflow, client) -> WebsocketCommunicator:
    cookie = (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())
    return WebsocketCommunicator(application, f"/ws/workflows/{workflow.pk}/", headers=[*HOST, cookie])


def by_token(workflow, key) -> WebsocketCommunicator:
    return WebsocketCommunicator(application, f"/ws/workflows/{workflow.pk}/?token={key}", headers=HOST)


async def watching(viewer) -> WebsocketCommunicator:
    connected, _ = await viewer.connect()
    assert connected
    assert (await viewer.receive_json_from(timeout=5))["type"] == "board.snapshot"
    return viewer


@pytest.fixture
def mia(workflow):
    user = UserFactory(username="mia")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    return user


def change_board(board, owner, title):
    backlog, _, _ = board
    return task_create(workflow=backlog.workflow, step=backlog, actor=owner, title=title)


async def assert_closed_then_silent(viewer, board, owner):
    assert await viewer.receive_output(timeout=5) == CLOSED
    await database_sync_to_async(change_board)(board, owner, "Secret plan")
    assert await viewer.receive_nothing(timeout=0.5)


async def assert_still_watching(viewer, board, owner, title):
    await database_sync_to_async(change_board)(board, owner, title)
    message = await viewer.receive_json_from(timeout=5)
    assert (message["type"], message["task"]["title"]) == ("task.created", title)


def test_removing_the_membership_closes_the_users_sockets(owner, workflow, board, mia):
    _, key = ApiToken.issue(user=mia)
    _, owner_key = ApiToken.issue(user=owner)

    async def scenario():
        session_viewer = await watching(by_session(workflow, await database_sync_to_async(signed_in)(mia)))
        token_viewer = await watching(by_token(workflow, key))
        owner_viewer = await watching(by_token(workflow, owner_key))
        await database_sync_to_async(Membership.objects.filter(user=mia).delete)()
        assert await session_viewer.receive_output(timeout=5) == CLOSED
        await assert_closed_then_silent(token_viewer, board, owner)
        assert (await owner_viewer.receive_json_from(timeout=5))["type"] == "task.created"

    async_to_sync(scenario)()


def test_a_role_that_may_not_watch_closes_the_socket_one_that_may_keeps_it(owner, workflow, board, mia, monkeypatch):
    membership = Membership.objects.get(user=mia)
    _, key = ApiToken.issue(user=mia)

    def lower(role):
        membership.role = role
        membership.save()

    async def scenario():
        viewer = await watching(by_token(workflow, key))
        await database_sync_to_async(lower)(Role.VIEWER)  # viewers may watch: still open
        await assert_still_watching(viewer, board, owner, "Seen by a viewer")
        monkeypatch.setattr(consumers, "WATCH_ROLES", frozenset({Role.OWNER, Role.MEMBER}))
        await database_sync_to_async(lower)(Role.VIEWER)
        await assert_closed_then_silent(viewer, board, owner)

    async_to_sync(scenario)()


def test_deactivating_the_user_closes_the_socket(owner, workflow, board, mia):
    def deactivate():
        mia.is_active = False
        mia.save()

    async def scenario():
        viewer = await watching(by_session(workflow, await database_sync_to_async(signed_in)(mia)))
        await database_sync_to_async(deactivate)()
        await assert_closed_then_silent(viewer, board, owner)

    async_to_sync(scenario)()


def test_revoking_the_token_closes_its_sockets_not_the_sessions(owner, workflow, board, mia):
    token, key = ApiToken.issue(user=mia)
    api = APIClient()
    api.force_authenticate(mia)

    async def scenario():
        session_viewer = await watching(by_session(workflow, await database_sync_to_async(signed_in)(mia)))
        token_viewer = await watching(by_token(workflow, key))
        revoked = await database_sync_to_async(api.delete)(f"/api/v1/tokens/{token.pk}/")
        assert revoked.status_code == 204
        await assert_closed_then_silent(token_viewer, board, owner)
        message = await session_viewer.receive_json_from(timeout=5)  # the change just made
        assert message["task"]["title"] == "Secret plan"

    async_to_sync(scenario)()


def test_logging_out_closes_that_sessions_sockets_only(owner, workflow, board, mia):
    async def scenario():
        leaving = await database_sync_to_async(signed_in)(mia)
        staying = await database_sync_to_async(signed_in)(mia)
        leaving_viewer = await watching(by_session(workflow, leaving))
        staying_viewer = await watching(by_session(workflow, staying))
        logged_out = await database_sync_to_async(leaving.post)("/accounts/logout/")
        assert logged_out.status_code == 302
        await assert_closed_then_silent(leaving_viewer, board, owner)
        message = await staying_viewer.receive_json_from(timeout=5)
        assert message["task"]["title"] == "Secret plan"

    async_to_sync(scenario)()
