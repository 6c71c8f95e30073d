"""Deleting a board or a team that holds tasks (was a 500: ProtectedError)."""

from boards.models import Task, TaskEvent
from workflows.models import Workflow, Workspace


def test_deleting_a_workflow_with_tasks_removes_it_whole(api, board, make_task):
    backlog, doing, done = board
    for step in board:
        make_task(step, f"in {step.name}")
    response = api.delete(f"/api/v1/workflows/{backlog.workflow_id}/")
    assert response.status_code == 204
    assert not Workflow.objects.exists()
    assert not Task.objects.exists() and not TaskEvent.objects.exists()


def test_deleting_a_workspace_with_boards_and_tasks(api, board, make_task):
    backlog, _, _ = board
    make_task(backlog, "waiting")
    response = api.delete(f"/api/v1/workspaces/{backlog.workflow.workspace_id}/")
    assert response.status_code == 204
    assert not Workspace.objects.exists() and not Task.objects.exists()
