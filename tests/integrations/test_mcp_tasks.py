"""The MCP task tools' assignee and class of service, called in this process on the server
the transports serve. Its sync tools run in a worker thread with their own connection, so
these tests commit (`transaction=True`)."""

import anyio
import pytest

from boards.models import NOT_ASSIGNABLE, Task
from integrations.mcp_tools import build_server
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


def call(owner, tool, **arguments):
    return anyio.run(build_server(user_id=owner.pk).call_tool, tool, arguments)


@pytest.fixture
def alice(workflow):
    user = UserFactory(username="alice")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    return user


def test_create_task_takes_an_assignee_and_a_class(board, owner, alice):
    _, _, done = board

    result = call(
        owner, "create_task", step_id=str(done.pk), title="a", assignee_id=alice.pk, class_of_service="expedite"
    )

    created = result.structured_content
    assert (created["assignee_id"], created["class_of_service"]) == (alice.pk, "expedite")
    assert Task.objects.get(pk=created["id"]).assignee == alice


def test_update_task_changes_only_what_it_is_given(board, owner, alice, make_task):
    _, _, done = board
    task = make_task(done, "a", assignee_id=alice.pk)

    renamed = call(owner, "update_task", task_id=str(task.pk), title="b").structured_content
    unassigned = call(owner, "update_task", task_id=str(task.pk), assignee_id=None).structured_content
    marked = call(owner, "update_task", task_id=str(task.pk), class_of_service="expedite").structured_content

    assert (renamed["title"], renamed["assignee_id"]) == ("b", alice.pk)
    assert (unassigned["assignee_id"], marked["class_of_service"]) == (None, "expedite")


@pytest.mark.parametrize("tool", ["create_task", "update_task"])
def test_an_assignee_outside_the_workspace_is_a_field_error(board, owner, make_task, tool):
    _, _, done = board
    stranger = UserFactory(username="sam")
    target = {"step_id": str(done.pk), "title": "a"} if tool == "create_task" else {"task_id": str(make_task(done).pk)}

    result = call(owner, tool, **target, assignee_id=stranger.pk)

    assert result.is_error
    assert result.structured_content["errors"] == {"assignee_id": [NOT_ASSIGNABLE]}
    assert not Task.objects.filter(assignee=stranger).exists()
