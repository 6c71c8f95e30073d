"""The MCP link tools (list_links, add_link, remove_link), over stdio, with the REST API's rules."""

import anyio
import pytest

from boards.models import Task, TaskLink
from tests.integrations.test_mcp import session, stdio

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]  # a server process


def test_stdio_link_tools_link_list_refuse_a_cycle_and_remove(board, owner, make_task):
    backlog, doing, done = board
    blocker = make_task(doing, "Build the API")
    dependent = make_task(doing, "Write the client")

    async def calls(client):
        added = await client.call_tool(
            "add_link", {"task_id": str(dependent.pk), "blocked_by_task_id": str(blocker.pk)}
        )
        listed = await client.call_tool("list_links", {"task_id": str(blocker.pk)})
        cycle = await client.call_tool("add_link", {"task_id": str(dependent.pk), "blocks_task_id": str(blocker.pk)})
        neither = await client.call_tool("add_link", {"task_id": str(dependent.pk)})
        removed = await client.call_tool("remove_link", {"link_id": added.structured_content["id"]})
        gone = await client.call_tool("remove_link", {"link_id": added.structured_content["id"]})
        return added, listed, cycle, neither, removed, gone

    added, listed, cycle, neither, removed, gone = anyio.run(session, stdio(owner.username), calls)
    assert (added.structured_content["blocker_id"], added.structured_content["dependent_id"]) == (
        str(blocker.pk),
        str(dependent.pk),
    )
    assert [link["dependent"]["title"] for link in listed.structured_content["result"]] == ["Write the client"]
    assert cycle.is_error and "cycle" in cycle.content[0].text
    assert neither.is_error and set(neither.structured_content["errors"]) == {"blocks_task_id", "blocked_by_task_id"}
    assert removed.structured_content["removed"] is True
    assert gone.is_error and gone.structured_content["code"] == "not_found"
    assert not TaskLink.objects.exists()
    assert Task.objects.get(pk=dependent.pk).blocked_by == []
