"""The board WebSocket: who may connect, the snapshot, and one message
per committed change, none for a rolled-back one."""

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from accounts.models import ApiToken
from boards.admission import task_bulk_move, task_create, task_move
from boards.structure import group_create, group_update
from common.errors import WipLimitReached
from kandev.asgi import application
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)
HOST = (b"host", b"localhost")
ORIGIN = (b"origin", b"http://localhost")


def session_headers(user) -> list:
    client = Client()
    client.force_login(user)
    return [HOST, ORIGIN, (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


def communicator(workflow, headers, query: str = "") -> WebsocketCommunicator:
    path = f"/ws/workflows/{workflow.pk}/{query}"
    return WebsocketCommunicator(application, path, headers=headers)


def run(scenario):
    async_to_sync(scenario)()


def test_anonymous_and_non_members_are_refused_at_connect(workflow, board):
    stranger = UserFactory(username="stranger")
    _, stranger_key = ApiToken.issue(user=stranger)

    async def scenario():
        for viewer in (
            communicator(workflow, [HOST, ORIGIN]),
            communicator(workflow, await database_sync_to_async(session_headers)(stranger)),
            communicator(workflow, [ORIGIN], f"?token={stranger_key}"),
            communicator(workflow, [ORIGIN], "?token=not-a-key"),
        ):
            connected, code = await viewer.connect()
            assert (connected, code) == (False, 4403)

    run(scenario)


def test_a_foreign_origin_is_refused(owner, workflow, board):
    async def scenario():
        headers = await database_sync_to_async(session_headers)(owner)
        viewer = communicator(workflow, [HOST, (b"origin", b"http://evil.example")] + headers[2:])
        connected, _ = await viewer.connect()
        assert not connected

    run(scenario)


def test_member_gets_the_snapshot_with_the_version(owner, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "Ship it")
    viewer_user = UserFactory(username="vera")
    MembershipFactory(workspace=workflow.workspace, user=viewer_user, role=Role.VIEWER)
    _, key = ApiToken.issue(user=viewer_user)

    async def scenario():
        for headers, query in (
            (await database_sync_to_async(session_headers)(owner), ""),
            ([ORIGIN], f"?token={key}"),  # a viewer by API token: viewers may watch
        ):
            viewer = communicator(workflow, headers, query)
            connected, _ = await viewer.connect()
            assert connected
            snapshot = await viewer.receive_json_from()
            assert snapshot["type"] == "board.snapshot"
            assert snapshot["version"] == 1 == snapshot["board"]["workflow"]["version"]
            steps = snapshot["board"]["steps"]
            assert [s["name"] for s in steps] == ["Backlog", "In Progress", "Done"]
            assert [t["title"] for t in steps[1]["tasks"]] == ["Ship it"]
            assert (steps[1]["occupied"], steps[1]["wip_limit"]) == (1, 2)
            await viewer.disconnect()

    run(scenario)


def test_the_snapshot_carries_the_groups_and_a_group_change_arrives_whole(owner, workflow, board, make_task):
    backlog, doing, done = board
    group = group_create(workflow=workflow, actor=owner, name="Flow", wip_limit=2, step_ids=[doing.pk, done.pk])
    make_task(doing, "a")
    make_task(done, "b")
    make_task(backlog, "next")  # the group is full: it waits

    async def scenario():
        viewer = communicator(workflow, await database_sync_to_async(session_headers)(owner))
        assert (await viewer.connect())[0]
        snapshot = await viewer.receive_json_from()
        [shown] = snapshot["board"]["groups"]
        assert (shown["id"], shown["wip_limit"], shown["occupied"], shown["over_limit"]) == (str(group.pk), 2, 2, False)
        await database_sync_to_async(group_update)(group=group, actor=owner, wip_limit=3)
        message = await viewer.receive_json_from()
        assert message["type"] == "group.updated"
        assert message["version"] == snapshot["version"] + 1
        assert (message["group"]["wip_limit"], message["group"]["occupied"]) == (3, 3)
        assert {(s["name"], s["occupied"]) for s in message["steps"]} == {
            ("Backlog", 0),
            ("In Progress", 2),
            ("Done", 1),
        }
        await viewer.disconnect()

    run(scenario)


def test_committed_move_and_its_pull_arrive_as_one_message(owner, workflow, board, make_task):
    backlog, doing, done = board
    working = [make_task(doing, f"Working {n}") for n in range(2)]
    waiting = make_task(backlog, "Waiting")  # In Progress is full: it waits

    async def scenario():
        viewer = communicator(workflow, await database_sync_to_async(session_headers)(owner))
        assert (await viewer.connect())[0]
        assert (await viewer.receive_json_from())["version"] == 3
        await database_sync_to_async(task_move)(task=working[0], to_step=done, actor=owner)
        message = await viewer.receive_json_from(timeout=5)
        assert message["type"] == "task.moved"
        assert message["version"] == 4
        assert message["task"]["id"] == str(working[0].pk)
        assert message["task"]["step_id"] == str(done.pk)
        moved = {t["id"]: t["step_id"] for t in message["tasks"]}
        assert moved == {str(working[0].pk): str(done.pk), str(waiting.pk): str(doing.pk)}
        counts = {s["id"]: (s["occupied"], s["wip_limit"], s["over_limit"]) for s in message["steps"]}
        assert counts == {
            str(backlog.pk): (0, 0, False),
            str(doing.pk): (2, 2, False),
            str(done.pk): (1, 0, False),
        }
        await viewer.receive_nothing()
        await viewer.disconnect()

    run(scenario)


def test_a_rolled_back_change_sends_nothing(owner, workflow, board, make_task):
    backlog, doing, done = board
    first, second = make_task(done, "First"), make_task(done, "Second")
    make_task(doing, "Busy")

    async def scenario():
        viewer = communicator(workflow, await database_sync_to_async(session_headers)(owner))
        assert (await viewer.connect())[0]
        assert (await viewer.receive_json_from())["version"] == 3
        # All-or-nothing: the first task fits, the second does not, so both roll back.
        with pytest.raises(WipLimitReached):
            await database_sync_to_async(task_bulk_move)(task_ids=[first.pk, second.pk], to_step=doing, actor=owner)
        with pytest.raises(WipLimitReached):
            await database_sync_to_async(task_create)(workflow=workflow, step=doing, actor=owner, title="Third")
            await database_sync_to_async(task_create)(workflow=workflow, step=doing, actor=owner, title="Fourth")
        # "Third" committed on its own; "Fourth" was refused and rolled back.
        assert (await viewer.receive_json_from(timeout=5))["version"] == 4
        await viewer.receive_nothing(timeout=0.5)
        await viewer.disconnect()

    run(scenario)
