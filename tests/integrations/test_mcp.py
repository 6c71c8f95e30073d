"""The MCP server, driven by the SDK's own client: over stdio (a `manage.py mcp_server`
subprocess) and over streamable HTTP (`/mcp/` of a real uvicorn)."""

import sys
import time

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from accounts.models import ApiToken
from boards import structure
from boards.models import Task, TaskEvent
from tests.factories import MembershipFactory, StepFactory, UserFactory
from tests.servers import ROOT, Server, serving_test_database
from workflows.models import OnFull, Role, Workflow

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # server processes

TOOLS = {
    "list_comments",
    "add_comment",
    "list_workflows",
    "list_steps",
    "get_board",
    "get_task",
    "forecast",
    "create_task",
    "move_task",
    "update_step",
    "list_groups",
    "update_group",
    "update_task",
    "list_labels",
    "save_label",
    "delete_label",
    "list_checklist",
    "add_checklist_item",
    "update_checklist_item",
    "delete_checklist_item",
    "list_attachments",
    "list_lanes",
    "create_lane",
    "update_lane",
    "list_links",
    "add_link",
    "remove_link",
    "block_task",
    "unblock_task",
    "list_blocker_types",
}


def stdio(username: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_server", "--user", username],
        env=serving_test_database(),
        cwd=ROOT,
    )


def over_http(base: str, key: str):
    client = httpx2.AsyncClient(headers={"Authorization": f"Token {key}"}, timeout=30)
    return streamable_http_client(f"{base}/mcp/", http_client=client)


async def session(server, calls):
    """Open one MCP session and run `calls(client)` in it."""
    async with Client(server) as client:
        return await calls(client)


def text(result) -> str:
    return result.content[0].text


def test_stdio_tools_read_and_write_the_board_with_wip_refusals_as_tool_errors(board, owner, make_task):
    backlog, doing, done = board
    make_task(doing, "a")
    make_task(doing, "b")
    waiting = make_task(backlog, "waiting")

    async def calls(client):
        listed = await client.list_tools()
        workflows = await client.call_tool("list_workflows", {})
        steps = await client.call_tool("list_steps", {"workflow_id": str(doing.workflow_id)})
        board_result = await client.call_tool("get_board", {"workflow_id": str(doing.workflow_id)})
        refused_create = await client.call_tool("create_task", {"step_id": str(doing.pk), "title": "c"})
        refused_move = await client.call_tool("move_task", {"task_id": str(waiting.pk), "step_id": str(doing.pk)})
        created = await client.call_tool(
            "create_task",
            {"workflow_id": str(doing.workflow_id), "title": "via mcp", "priority": "high"},
        )
        return listed, workflows, steps, board_result, refused_create, refused_move, created

    listed, workflows, steps, board_result, refused_create, refused_move, created = anyio.run(
        session, stdio(owner.username), calls
    )
    assert {tool.name for tool in listed.tools} == TOOLS
    assert [w["name"] for w in workflows.structured_content["result"]] == ["Delivery"]
    in_progress = steps.structured_content["result"][1]
    assert {k: in_progress[k] for k in ("name", "wip_limit", "pull_from_step_id", "on_full", "occupied")} == {
        "name": "In Progress",
        "wip_limit": 2,
        "pull_from_step_id": str(backlog.pk),
        "on_full": "reject",
        "occupied": 2,
    }
    assert [t["title"] for t in board_result.structured_content["steps"][1]["tasks"]] == ["a", "b"]
    for refused in (refused_create, refused_move):
        assert refused.is_error
        assert text(refused) == 'Step "In Progress" is at its WIP limit (2 of 2).'
        assert refused.structured_content == {
            "code": "wip_limit_reached",
            "scope": "step",
            "detail": 'Step "In Progress" is at its WIP limit (2 of 2).',
            "step": {"id": str(doing.pk), "name": "In Progress"},
            "limit": 2,
            "occupied": 2,
        }
    assert not created.is_error
    assert (created.structured_content["step_id"], created.structured_content["priority"]) == (
        str(backlog.pk),
        "high",
    )
    # The refusals left nothing: three tasks from the fixture, one from MCP.
    assert Task.objects.count() == 4
    assert not Task.objects.filter(title="c").exists()
    waiting.refresh_from_db()
    assert waiting.step == backlog
    assert TaskEvent.objects.filter(actor=owner, detail__action="create").count() == 4


def test_stdio_update_step_reads_and_writes_limit_feeder_and_on_full(board, owner, make_task):
    backlog, doing, done = board
    make_task(doing, "a")
    make_task(doing, "b")
    make_task(backlog, "next")

    async def calls(client):
        read = await client.call_tool("update_step", {"step_id": str(doing.pk)})
        raised = await client.call_tool("update_step", {"step_id": str(doing.pk), "wip_limit": 3})
        queue = await client.call_tool("update_step", {"step_id": str(done.pk), "on_full": "queue"})
        cleared = await client.call_tool("update_step", {"step_id": str(doing.pk), "pull_from_step_id": None})
        refed = await client.call_tool(
            "update_step",
            {"step_id": str(done.pk), "pull_from_step_id": str(doing.pk), "wip_limit": 1},
        )
        cycle = await client.call_tool("update_step", {"step_id": str(doing.pk), "pull_from_step_id": str(done.pk)})
        bad = await client.call_tool("update_step", {"step_id": str(doing.pk), "wip_limit": -1, "on_full": "x"})
        return read, raised, queue, cleared, refed, cycle, bad

    read, raised, queue, cleared, refed, cycle, bad = anyio.run(session, stdio(owner.username), calls)
    assert (read.structured_content["wip_limit"], read.structured_content["on_full"]) == (
        2,
        "reject",
    )
    assert read.structured_content["pull_from_step_id"] == str(backlog.pk)
    # Raising the limit pulls the next backlog task at once.
    assert (raised.structured_content["wip_limit"], raised.structured_content["occupied"]) == (3, 3)
    assert Task.objects.get(title="next").step == doing
    assert queue.structured_content["on_full"] == OnFull.QUEUE
    assert cleared.structured_content["pull_from_step_id"] is None
    assert refed.structured_content["pull_from_step_id"] == str(doing.pk)
    assert refed.structured_content["occupied"] == 1  # Done pulled one task from In Progress
    assert cycle.is_error and cycle.structured_content["errors"] == {
        "pull_from_step_id": ["This feeder would form a cycle of pulls."]
    }
    assert bad.is_error and set(bad.structured_content["errors"]) == {"wip_limit", "on_full"}
    doing.refresh_from_db()
    assert (doing.wip_limit, doing.pull_from_step_id) == (3, None)


def test_stdio_step_tools_show_and_change_the_kind(board, owner):
    backlog, doing, done = board

    async def calls(client):
        listed = await client.call_tool("list_steps", {"workflow_id": str(doing.workflow_id)})
        changed = await client.call_tool("update_step", {"step_id": str(doing.pk), "kind": "done"})
        bad = await client.call_tool("update_step", {"step_id": str(backlog.pk), "kind": "urgent"})
        return listed, changed, bad

    listed, changed, bad = anyio.run(session, stdio(owner.username), calls)
    assert [s["kind"] for s in listed.structured_content["result"]] == ["backlog", "active", "done"]
    assert changed.structured_content["kind"] == "done"
    assert bad.is_error and set(bad.structured_content["errors"]) == {"kind"}
    assert list(doing.workflow.steps.order_by("position").values_list("kind", flat=True)) == ["backlog", "done", "done"]


def test_stdio_group_tools_read_and_change_a_group_with_the_rest_apis_rules(board, owner, make_task):
    backlog, doing, done = board
    structure.step_update(step=doing, actor=owner, wip_limit=5)
    group = structure.group_create(
        workflow=doing.workflow, actor=owner, name="Development", wip_limit=2, step_ids=[doing.pk, done.pk]
    )
    make_task(doing, "a")
    make_task(doing, "b")
    make_task(backlog, "next")  # waits: the group is full
    group_id = str(group.pk)

    async def calls(client):
        return (
            await client.call_tool("get_board", {"workflow_id": str(doing.workflow_id)}),
            await client.call_tool("list_groups", {"workflow_id": str(doing.workflow_id)}),
            await client.call_tool("update_group", {"group_id": group_id}),
            await client.call_tool("update_group", {"group_id": group_id, "wip_limit": 3, "name": "Dev"}),
            await client.call_tool("create_task", {"step_id": str(done.pk), "title": "over"}),
            await client.call_tool("update_group", {"group_id": group_id, "wip_limit": 0, "step_ids": [str(done.pk)]}),
            await client.call_tool("update_group", {"group_id": str(backlog.pk)}),
        )

    board_result, listed, read, raised, refused, bad, unknown = anyio.run(session, stdio(owner.username), calls)
    expected = {
        "id": group_id,
        "workflow_id": str(doing.workflow_id),
        "name": "Development",
        "wip_limit": 2,
        "step_ids": [str(doing.pk), str(done.pk)],
        "occupied": 2,
        "over_limit": False,
    }
    assert board_result.structured_content["groups"] == [expected]
    assert [s["group_id"] for s in board_result.structured_content["steps"]] == [None, group_id, group_id]
    assert listed.structured_content["result"] == [expected]
    assert read.structured_content == expected
    # Raising the limit pulls the task that waited, at once.
    assert raised.structured_content == {**expected, "name": "Dev", "wip_limit": 3, "occupied": 3}
    assert Task.objects.get(title="next").step == doing
    assert refused.is_error and refused.structured_content == {
        "code": "wip_limit_reached",
        "scope": "group",
        "group": {"id": group_id, "name": "Dev"},
        "step": {"id": str(done.pk), "name": "Done"},
        "limit": 3,
        "occupied": 3,
        "detail": 'Group "Dev" is at its WIP limit (3 of 3).',
    }
    assert text(refused) == 'Group "Dev" is at its WIP limit (3 of 3).'
    assert bad.is_error and set(bad.structured_content["errors"]) == {"wip_limit", "step_ids"}
    assert unknown.is_error and unknown.structured_content == {"code": "not_found", "detail": "Not found."}
    group.refresh_from_db()
    assert (group.name, group.wip_limit) == ("Dev", 3)


def test_stdio_membership_rules_match_the_rest_api(board, owner):
    backlog, doing, _ = board
    viewer = UserFactory(username="vera")
    MembershipFactory(workspace=doing.workflow.workspace, user=viewer, role=Role.VIEWER)
    hidden = StepFactory(name="Hidden")

    async def calls(client):
        return (
            await client.call_tool("list_workflows", {}),
            await client.call_tool("get_board", {"workflow_id": str(doing.workflow_id)}),
            await client.call_tool("create_task", {"step_id": str(backlog.pk), "title": "nope"}),
            await client.call_tool("update_step", {"step_id": str(doing.pk), "wip_limit": 9}),
            await client.call_tool("get_board", {"workflow_id": str(hidden.workflow_id)}),
            await client.call_tool("update_step", {"step_id": str(hidden.pk)}),
        )

    workflows, readable, create, update, other_board, other_step = anyio.run(session, stdio("vera"), calls)
    assert [w["name"] for w in workflows.structured_content["result"]] == ["Delivery"]
    assert not readable.is_error
    for refused in (create, update):
        assert refused.is_error and refused.structured_content["code"] == "permission_denied"
    for hidden_result in (other_board, other_step):
        assert hidden_result.is_error and hidden_result.structured_content == {
            "code": "not_found",
            "detail": "Not found.",
        }
    assert not Task.objects.exists()
    doing.refresh_from_db()
    assert doing.wip_limit == 2


def test_over_http_with_a_token(board, owner, make_task):
    _, doing, done = board
    make_task(doing, "a")
    _, key = ApiToken.issue(user=owner)

    async def calls(client):
        first = await client.call_tool("create_task", {"step_id": str(doing.pk), "title": "b"})
        refused = await client.call_tool("create_task", {"step_id": str(doing.pk), "title": "c"})
        moved = await client.call_tool(
            "move_task", {"task_id": first.structured_content["id"], "step_id": str(done.pk)}
        )
        steps = await client.call_tool("list_steps", {"workflow_id": str(doing.workflow_id)})
        return first, refused, moved, steps

    with Server(serving_test_database(), workers=2) as server:
        base = server.url
        first, refused, moved, steps = anyio.run(session, over_http(base, key), calls)
        anonymous = httpx.post(f"{base}/mcp/", json={}, headers={"Accept": "application/json"})
        forged = httpx.post(f"{base}/mcp/", json={}, headers={"Authorization": "Token not-a-key"})
        django_still_answers = httpx.get(f"{base}/healthz")
    assert first.structured_content["step_id"] == str(doing.pk)
    assert refused.is_error and text(refused) == 'Step "In Progress" is at its WIP limit (2 of 2).'
    assert refused.structured_content["occupied"] == 2
    assert moved.structured_content["step_id"] == str(done.pk)
    assert steps.structured_content["result"][1]["occupied"] == 1
    assert (anonymous.status_code, forged.status_code) == (401, 401)
    assert anonymous.headers["WWW-Authenticate"] == "Token"
    assert django_still_answers.status_code == 200
    assert Workflow.objects.get(pk=doing.workflow_id).version == 3  # a, b, the move
    assert sorted(Task.objects.values_list("title", flat=True)) == ["a", "b"]


def test_an_event_stream_opened_by_get_ends_after_the_idle_timeout(owner):
    """Stateless, nothing is ever sent on a GET's stream: it closes once the idle timeout
    (one second here) passes, instead of holding a connection for ever."""
    _, key = ApiToken.issue(user=owner)
    headers = {"Authorization": f"Token {key}", "Accept": "text/event-stream"}
    env = serving_test_database(KANDEV_MCP_IDLE_TIMEOUT_SECONDS="1")
    # A 5 s read timeout: a stream that does not end fails before its first keep-alive ping (15 s).
    with Server(env) as server, httpx.Client(base_url=server.url, headers=headers, timeout=5) as client:
        opened = time.monotonic()
        with client.stream("GET", "/mcp/") as stream:
            status, content_type = stream.status_code, stream.headers["content-type"]
            received = stream.read()  # returns once the server ends the stream
        lasted = time.monotonic() - opened
        still_serving = client.get("/healthz").status_code
        log = server.log()
    assert status == 200 and content_type.startswith("text/event-stream")
    assert received.strip() == b""  # no message: none was sent
    assert 1 <= lasted < 5
    assert still_serving == 200
    assert "Traceback" not in log and "ASGI callable returned without completing" not in log
