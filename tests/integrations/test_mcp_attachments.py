"""The MCP tool that lists a task's attachments, called in this process on the server the
transports serve (its sync tools run in a worker thread: these tests commit)."""

import anyio
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from boards.attachments import attachment_add
from integrations.mcp_tools import build_server
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path)}},
    }


def call(user, tool, **arguments):
    return anyio.run(build_server(user_id=user.pk).call_tool, tool, arguments)


def test_list_attachments_names_each_file_and_where_to_download_it(board, owner, make_task):
    task = make_task(board[0], "Report")
    attachment = attachment_add(task=task, actor=owner, upload=SimpleUploadedFile("q3.csv", b"a,b\n1,2\n", "text/csv"))

    result = call(owner, "list_attachments", task_id=str(task.pk))

    assert not result.is_error
    (listed,) = result.structured_content["result"]
    assert listed == {
        "id": str(attachment.pk),
        "task_id": str(task.pk),
        "name": "q3.csv",
        "size": 8,
        "content_type": "text/csv",
        "uploaded_by": owner.username,
        "created_at": listed["created_at"],
        "url": f"/api/v1/attachments/{attachment.pk}/download/",
    }


def test_list_attachments_of_another_workspace_is_not_found(board, owner, make_task):
    task = make_task(board[0], "Report")
    stranger = UserFactory()
    MembershipFactory(workspace=WorkflowFactory().workspace, user=stranger, role=Role.OWNER)

    result = call(stranger, "list_attachments", task_id=str(task.pk))

    assert result.is_error and result.structured_content["code"] == "not_found"
