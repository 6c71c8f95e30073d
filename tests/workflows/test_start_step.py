"""A board always keeps one start step: unsetting it is refused, moving it is allowed."""

from workflows.models import WorkflowStep


def test_unsetting_the_start_step_is_refused_and_changes_nothing(api, board):
    backlog, doing, done = board
    response = api.patch(f"/api/v1/steps/{backlog.pk}/", {"is_start_step": False}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"is_start_step": ["Choose another start step instead of unsetting this one."]}
    assert WorkflowStep.objects.get(pk=backlog.pk).is_start_step


def test_choosing_another_start_step_moves_it(api, board):
    backlog, doing, done = board
    response = api.patch(f"/api/v1/steps/{done.pk}/", {"is_start_step": True}, format="json")
    assert response.status_code == 200
    starts = WorkflowStep.objects.filter(workflow=backlog.workflow, is_start_step=True)
    assert list(starts.values_list("name", flat=True)) == ["Done"]
