"""The MCP tools for labels, due dates and checklists: the same services and rules as the
REST API (membership, viewers, field errors). Sync tools run in a worker thread with their
own connection, so these tests commit (`transaction=True`)."""

import anyio
import pytest

from boards.models import ChecklistItem, Label, Task
from integrations.mcp_tools import build_server
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


def call(user, tool, **arguments):
    return anyio.run(build_server(user_id=user.pk).call_tool, tool, arguments)


def test_an_agent_labels_dates_and_checks_off_a_task(board, owner, make_task, workflow):
    task = make_task(board[2], "Ship")
    made = call(
        owner, "save_label", workspace_id=str(workflow.workspace_id), name="Bug", color="red"
    ).structured_content
    renamed = call(owner, "save_label", label_id=made["id"], name="Defect").structured_content
    assert (renamed["name"], renamed["color"]) == ("Defect", "red")
    listed = call(owner, "list_labels", workspace_id=str(workflow.workspace_id)).structured_content["result"]
    assert [label["name"] for label in listed] == ["Defect"]

    updated = call(owner, "update_task", task_id=str(task.pk), label_ids=[made["id"]], due_at="2026-12-05")
    assert (updated.structured_content["label_ids"], updated.structured_content["due_all_day"]) == ([made["id"]], True)
    kept = call(owner, "update_task", task_id=str(task.pk), title="Ship it").structured_content
    assert (kept["label_ids"], kept["due_at"]) == ([made["id"]], "2026-12-05T00:00:00+00:00")
    cleared = call(owner, "update_task", task_id=str(task.pk), due_at=None).structured_content
    assert cleared["due_at"] is None

    first = call(owner, "add_checklist_item", task_id=str(task.pk), text="Build").structured_content
    call(owner, "add_checklist_item", task_id=str(task.pk), text="Tag")
    call(owner, "update_checklist_item", item_id=first["id"], done=True, position=1)
    items = call(owner, "list_checklist", task_id=str(task.pk)).structured_content["result"]
    assert [(item["text"], item["done"]) for item in items] == [("Tag", False), ("Build", True)]
    assert Task.objects.get(pk=task.pk).checklist == {"done": 1, "total": 2}
    call(owner, "delete_checklist_item", item_id=first["id"])
    call(owner, "delete_label", label_id=made["id"])
    assert Task.objects.get(pk=task.pk).checklist == {"done": 0, "total": 1}
    assert Task.objects.get(pk=task.pk).label_ids == [] and not Label.objects.exists()


def test_the_tools_refuse_as_the_api_does(board, owner, make_task, workflow):
    task = make_task(board[2], "Ship")
    label = call(owner, "save_label", workspace_id=str(workflow.workspace_id), name="Bug").structured_content
    item = call(owner, "add_checklist_item", task_id=str(task.pk), text="Build").structured_content
    viewer = UserFactory()
    MembershipFactory(workspace=workflow.workspace, user=viewer, role=Role.VIEWER)
    stranger = UserFactory()
    MembershipFactory(workspace=WorkflowFactory().workspace, user=stranger, role=Role.OWNER)

    refusals = {
        "taken": call(owner, "save_label", workspace_id=str(workflow.workspace_id), name="bug"),
        "bad due": call(owner, "update_task", task_id=str(task.pk), due_at="soon"),
        "blank item": call(owner, "add_checklist_item", task_id=str(task.pk), text=" "),
        "viewer": call(viewer, "update_checklist_item", item_id=item["id"], done=True),
        "viewer label": call(viewer, "delete_label", label_id=label["id"]),
        "stranger": call(stranger, "list_checklist", task_id=str(task.pk)),
        "stranger label": call(stranger, "save_label", label_id=label["id"], name="x"),
        "stranger workspace": call(stranger, "save_label", workspace_id=str(workflow.workspace_id), name="x"),
    }
    codes = {name: (result.is_error, result.structured_content["code"]) for name, result in refusals.items()}
    assert codes == {
        "taken": (True, "invalid"),
        "bad due": (True, "invalid"),
        "blank item": (True, "invalid"),
        "viewer": (True, "permission_denied"),
        "viewer label": (True, "permission_denied"),
        "stranger": (True, "not_found"),
        "stranger label": (True, "not_found"),
        "stranger workspace": (True, "invalid"),
    }
    assert ChecklistItem.objects.get().done is False and Label.objects.get().name == "Bug"
