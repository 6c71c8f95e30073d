"""Edits that tried to reach past their object (found by schemathesis)."""

from tests.factories import MembershipFactory, WorkflowFactory
from workflows.models import Role, Workflow


def test_a_workflow_patch_cannot_move_the_board_to_another_workspace(api, board, owner):
    backlog, _, _ = board
    elsewhere = WorkflowFactory().workspace  # not even a member there
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.VIEWER)
    response = api.patch(
        f"/api/v1/workflows/{backlog.workflow_id}/",
        {"workspace_id": str(elsewhere.pk), "template": "kanban", "name": "Renamed"},
        format="json",
    )
    assert response.status_code == 200
    assert response.json()["workspace_id"] == str(backlog.workflow.workspace_id)
    workflow = Workflow.objects.get(pk=backlog.workflow_id)
    assert (workflow.workspace_id, workflow.name) == (backlog.workflow.workspace_id, "Renamed")


def test_step_events_must_be_an_object(api, board):
    _, doing, _ = board
    for events in ([None, None], "on_enter", 3):
        response = api.patch(f"/api/v1/steps/{doing.pk}/", {"events": events}, format="json")
        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["events"]


def test_an_unknown_export_format_is_a_json_404(api, board):
    backlog, _, _ = board
    response = api.get(f"/api/v1/workflows/{backlog.workflow_id}/export/?format=AAA")
    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
