"""The MCP comment tools: the REST API's rules, called on the server the transports serve
(its sync tools run in a worker thread with their own connection: these tests commit)."""

import anyio
import pytest

from boards.models import Comment, Task
from integrations.mcp_tools import build_server
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


def call(user, tool, **arguments):
    return anyio.run(build_server(user_id=user.pk).call_tool, tool, arguments)


def test_an_agent_comments_with_a_mention_and_lists_the_comments(board, owner, make_task, workflow):
    alice = UserFactory(username="alice")
    MembershipFactory(workspace=workflow.workspace, user=alice, role=Role.MEMBER)
    task = make_task(board[0], "Deploy")

    added = call(owner, "add_comment", task_id=str(task.pk), body="Done, @alice and @nobody.")
    listed = call(alice, "list_comments", task_id=str(task.pk))

    assert not added.is_error
    assert (added.structured_content["author"], added.structured_content["mentions"]) == ("olivia", ["alice"])
    assert [c["body"] for c in listed.structured_content["result"]] == ["Done, @alice and @nobody."]
    assert Task.objects.get(pk=task.pk).comment_count == 1


def test_viewers_read_but_cannot_comment_and_strangers_see_nothing(board, owner, make_task, workflow):
    viewer = UserFactory(username="vera")
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    stranger = UserFactory(username="sam")
    task = make_task(board[0], "Deploy")

    refused = call(viewer, "add_comment", task_id=str(task.pk), body="hi")
    hidden = call(stranger, "list_comments", task_id=str(task.pk))
    blank = call(owner, "add_comment", task_id=str(task.pk), body="  ")

    assert (refused.is_error, refused.structured_content["code"]) == (True, "permission_denied")
    assert (hidden.is_error, hidden.structured_content["code"]) == (True, "not_found")
    assert (blank.is_error, list(blank.structured_content["errors"])) == (True, ["body"])
    assert not Comment.objects.exists()
