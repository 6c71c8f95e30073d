"""Blocker types: a workspace's list (owners keep it, members read it), a block's optional
type (REST and MCP), the live messages on every board, bad input and a race for a name."""

import anyio
import pytest

from boards import blocker_types
from boards.models import BlockerType, EventKind, Task, TaskEvent
from boards.services import task_block, task_unblock
from boards.snapshots import board_snapshot
from integrations.mcp_tools import build_server
from tests.concurrency import race, rounds
from tests.conftest import member_client
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory, WorkspaceFactory
from workflows.models import Role, Workflow

URL = "/api/v1/blocker-types/"


@pytest.fixture
def vendor(workflow, owner):
    return blocker_types.blocker_type_create(workspace_id=workflow.workspace_id, actor=owner, name="Vendor")


def card_of(board: dict, task) -> dict:
    return next(card for step in board["steps"] for card in step["tasks"] if card["id"] == str(task.pk))


def test_owners_create_rename_and_delete_types_members_read_them(api, workflow):
    made = api.post(URL, {"workspace_id": str(workflow.workspace_id), "name": " Vendor "}, format="json")
    assert made.status_code == 201, made.content
    body = made.json()
    assert body == {"id": body["id"], "workspace_id": str(workflow.workspace_id), "name": "Vendor"}

    member = member_client(workflow.workspace, Role.MEMBER)
    listed = member.get(URL, {"workspace": str(workflow.workspace_id)}).json()
    assert [t["name"] for t in listed["results"]] == ["Vendor"]
    assert member.patch(f"{URL}{body['id']}/", {"name": "Supplier"}, format="json").status_code == 403

    renamed = api.patch(f"{URL}{body['id']}/", {"name": "Supplier"}, format="json")
    assert (renamed.status_code, renamed.json()["name"]) == (200, "Supplier")
    assert api.delete(f"{URL}{body['id']}/").status_code == 204
    assert not BlockerType.objects.exists()


def test_a_name_is_one_per_workspace_case_aside_and_bad_input_is_a_field_error(api, workflow, vendor):
    workspace_id = str(workflow.workspace_id)
    taken = api.post(URL, {"workspace_id": workspace_id, "name": "vendor"}, format="json")
    assert taken.status_code == 400 and list(taken.json()["errors"]) == ["name"], taken.content
    other = api.post(URL, {"workspace_id": workspace_id, "name": "Review"}, format="json").json()
    assert api.patch(f"{URL}{other['id']}/", {"name": " VENDOR"}, format="json").status_code == 400
    # Its own name in another case is a rename, not a clash.
    assert api.patch(f"{URL}{vendor.pk}/", {"name": "VENDOR"}, format="json").json()["name"] == "VENDOR"
    for body in ({"workspace_id": workspace_id}, {"workspace_id": workspace_id, "name": "   "},
                 {"workspace_id": workspace_id, "name": "x" * 61}, {"workspace_id": "nope", "name": "A"},
                 {"workspace_id": str(WorkspaceFactory().pk), "name": "A"}):  # fmt: skip
        refused = api.post(URL, body, format="json")
        assert refused.status_code == 400, (body, refused.content)
    assert api.get(URL, {"workspace": "nope"}).status_code == 400
    assert api.get(f"{URL}not-an-id/").status_code == 404
    stranger = member_client(WorkspaceFactory(), Role.OWNER)
    assert stranger.get(f"{URL}{vendor.pk}/").status_code == 404
    assert stranger.delete(f"{URL}{vendor.pk}/").status_code == 404
    assert stranger.get(URL, {"workspace": workspace_id}).json()["results"] == []


def test_a_block_takes_a_type_of_its_workspace_and_loses_it_when_unblocked(api, board, make_task, vendor):
    task = make_task(board[0], "Ship")
    url = f"/api/v1/tasks/{task.pk}/block/"
    blocked = api.post(url, {"reason": "Waiting on the supplier", "blocked_type_id": str(vendor.pk)}, format="json")
    assert blocked.status_code == 200, blocked.content
    assert blocked.json()["blocked_type_id"] == str(vendor.pk)
    event = TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.BLOCKED).get()
    assert (event.reason, event.detail["type_id"], event.detail["type"]) == (
        "Waiting on the supplier",
        str(vendor.pk),
        "Vendor",
    )

    elsewhere = BlockerType.objects.create(workspace=WorkspaceFactory(), name="Vendor")
    for bad in (str(elsewhere.pk), "nope"):
        refused = api.post(url, {"reason": "x", "blocked_type_id": bad}, format="json")
        assert refused.status_code == 400 and list(refused.json()["errors"]) == ["blocked_type_id"], refused.content
    assert Task.objects.get(pk=task.pk).blocked_type_id == vendor.pk  # a refusal changes nothing

    untyped = api.post(url, {"reason": "Waiting on the supplier"}, format="json").json()
    assert (untyped["blocked_reason"], untyped["blocked_type_id"]) == ("Waiting on the supplier", None)
    task_block(task=task, actor=vendor.workspace.memberships.get().user, reason="x", blocked_type_id=vendor.pk)
    unblocked = api.post(f"/api/v1/tasks/{task.pk}/unblock/", {}, format="json").json()
    assert (unblocked["blocked_reason"], unblocked["blocked_type_id"]) == ("", None)


def test_the_card_carries_the_type_without_a_query_more(board, make_task, vendor, owner, workflow):
    task = make_task(board[0], "Ship")
    task_block(task=task, actor=owner, reason="Supplier", blocked_type_id=vendor.pk)
    board_read = board_snapshot(workflow=Workflow.objects.get(pk=workflow.pk))
    assert card_of(board_read, task)["blocked_type_id"] == str(vendor.pk)


def test_type_changes_reach_every_board_live_and_a_deleted_type_leaves_the_block(
    board, make_task, workflow, owner, broadcasts
):
    other_board = WorkflowFactory(workspace=workflow.workspace)
    other_step = other_board.steps.create(name="Todo", position=0, is_start_step=True)
    (made,) = broadcasts(
        other_board,
        lambda: blocker_types.blocker_type_create(workspace_id=workflow.workspace_id, actor=owner, name="Vendor"),
    )
    kind = BlockerType.objects.get()
    assert made["type"] == "blocker_type.updated"
    assert made["blocker_type"] == {"id": str(kind.pk), "workspace_id": str(workflow.workspace_id), "name": "Vendor"}
    (renamed,) = broadcasts(
        workflow, lambda: blocker_types.blocker_type_rename(blocker_type=kind, actor=owner, name="Supplier")
    )
    assert (renamed["type"], renamed["blocker_type"]["name"]) == ("blocker_type.updated", "Supplier")

    here, there = make_task(board[0], "a"), make_task(other_step, "b")
    for task in (here, there):
        task_block(task=task, actor=owner, reason="Supplier late", blocked_type_id=kind.pk)
    (deleted,) = broadcasts(workflow, lambda: blocker_types.blocker_type_delete(blocker_type=kind, actor=owner))
    assert (deleted["type"], deleted["blocker_type_id"]) == ("blocker_type.deleted", str(kind.pk))
    assert [(t["id"], t["blocked_type_id"], t["blocked_reason"]) for t in deleted["tasks"]] == [
        (str(here.pk), None, "Supplier late")
    ]
    assert {(t.blocked_type_id, t.blocked_reason) for t in Task.objects.all()} == {(None, "Supplier late")}
    task_unblock(task=here, actor=owner)


def call(user, tool, **arguments):
    return anyio.run(build_server(user_id=user.pk).call_tool, tool, arguments)


@pytest.mark.django_db(transaction=True)
def test_an_agent_lists_types_and_blocks_with_one(board, make_task, vendor, owner, workflow):
    task = make_task(board[0], "Ship")
    listed = call(owner, "list_blocker_types", workspace_id=str(workflow.workspace_id)).structured_content
    assert listed["result"] == [{"id": str(vendor.pk), "workspace_id": str(workflow.workspace_id), "name": "Vendor"}]
    blocked = call(owner, "block_task", task_id=str(task.pk), reason="Supplier", blocked_type_id=str(vendor.pk))
    assert blocked.structured_content["blocked_type_id"] == str(vendor.pk)
    refused = call(owner, "block_task", task_id=str(task.pk), reason="Supplier", blocked_type_id="nope")
    assert refused.is_error and "blocked_type_id" in refused.content[0].text
    unblocked = call(owner, "unblock_task", task_id=str(task.pk)).structured_content
    assert (unblocked["blocked_reason"], unblocked["blocked_type_id"]) == ("", None)
    viewer = UserFactory()
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    assert call(viewer, "block_task", task_id=str(task.pk), reason="x").is_error


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("with_board", [True, False], ids=["board-lock", "no-board"])
@rounds(3)
def test_two_owners_giving_one_name_at_once_make_one_type(with_board):
    """With a board, its lock orders the two; without one, the database's unique name does."""
    workflow = WorkflowFactory()
    workspace = workflow.workspace
    if not with_board:
        workflow.delete()
    clients = [member_client(workspace, Role.OWNER) for _ in range(2)]
    names = ["Vendor", "VENDOR"]
    responses = race(
        2, lambda i: clients[i].post(URL, {"workspace_id": str(workspace.pk), "name": names[i]}, format="json")
    )
    assert sorted(r.status_code for r in responses) == [201, 400], responses
    refused = next(r for r in responses if r.status_code == 400)
    assert list(refused.json()["errors"]) == ["name"]
    assert BlockerType.objects.filter(workspace=workspace).count() == 1
