"""REST API: status codes, bodies, authorization, validation."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from boards.models import Task
from tests.conftest import board_state, member_client
from tests.factories import StepFactory, WorkflowFactory
from workflows.models import Role


def test_create_move_and_conflict_bodies(api, board):
    backlog, doing, done = board
    created = [api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": t}, format="json") for t in "ab"]
    assert [r.status_code for r in created] == [201, 201]
    assert created[0].json()["step_id"] == str(doing.pk)
    refused = api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "c"}, format="json")
    assert refused.status_code == 409
    assert refused.json() == {
        "code": "wip_limit_reached",
        "scope": "step",
        "detail": 'Step "In Progress" is at its WIP limit (2 of 2).',
        "step": {"id": str(doing.pk), "name": "In Progress"},
        "limit": 2,
        "occupied": 2,
    }
    waiting = api.post("/api/v1/tasks/", {"workflow_id": str(backlog.workflow_id), "title": "w"}, format="json")
    assert waiting.json()["step_id"] == str(backlog.pk)
    moved = api.post(f"/api/v1/tasks/{created[0].json()['id']}/move/", {"step_id": str(done.pk)}, format="json")
    assert moved.status_code == 200
    board_body = api.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").json()
    assert [s["name"] for s in board_body["steps"]] == ["Backlog", "In Progress", "Done"]
    assert [t["title"] for t in board_body["steps"][1]["tasks"]] == ["b", "w"]
    assert board_body["steps"][1]["occupied"] == 2
    assert board_body["workflow"]["version"] == 4  # three creates and a move (with its pull)


def test_validation_errors_are_400_with_field_errors(api, board):
    _, doing, _ = board
    response = api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "", "priority": "urgent"}, format="json")
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["errors"]) == {"title", "priority"}
    assert Task.objects.count() == 0


def test_a_move_to_another_boards_step_is_400_and_names_no_step_the_user_cannot_see(api, board, make_task, workflow):
    """The step a move names is found on the locked board; only a step off it is asked about."""
    backlog, _, _ = board
    task = make_task(backlog, "a")
    sibling = StepFactory(workflow=WorkflowFactory(workspace=workflow.workspace))  # a board the owner sees
    foreign = StepFactory()  # another workspace's board
    before = board_state(workflow)
    path = f"/api/v1/tasks/{task.pk}/move/"
    seen = api.post(path, {"step_id": str(sibling.pk)}, format="json")
    unseen = api.post(path, {"step_id": str(foreign.pk)}, format="json")
    forced = api.post(path, {"step_id": str(foreign.pk), "force": True}, format="json")  # no reason either
    assert (seen.status_code, seen.json()["errors"]) == (400, {"step_id": ["No such step in this workflow."]})
    assert (unseen.status_code, unseen.json()["errors"]) == (400, {"step_id": ["No such step."]})
    assert (forced.status_code, forced.json()["errors"]) == (400, {"step_id": ["No such step."]})
    assert board_state(workflow) == before


def test_step_feeder_cycle_and_self_reference_are_400(api, board):
    backlog, doing, _ = board
    cycle = api.patch(f"/api/v1/steps/{backlog.pk}/", {"pull_from_step_id": str(doing.pk)}, format="json")
    assert cycle.status_code == 400
    assert "pull_from_step_id" in cycle.json()["errors"]
    itself = api.patch(f"/api/v1/steps/{doing.pk}/", {"pull_from_step_id": str(doing.pk)}, format="json")
    assert itself.status_code == 400
    negative = api.patch(f"/api/v1/steps/{doing.pk}/", {"wip_limit": -1}, format="json")
    assert negative.status_code == 400


def test_non_member_gets_404_viewer_403_anonymous_401(board):
    backlog, _, _ = board
    outsider = member_client(WorkflowFactory().workspace, Role.OWNER)
    assert outsider.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").status_code == 404
    viewer = member_client(backlog.workflow.workspace, Role.VIEWER)
    assert viewer.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").status_code == 200
    write = viewer.post("/api/v1/tasks/", {"step_id": str(backlog.pk), "title": "x"}, format="json")
    assert write.status_code == 403
    anonymous = APIClient().get("/api/v1/workspaces/")
    assert anonymous.status_code == 401


@pytest.mark.parametrize("tasks", [5, 50])
def test_board_query_count_does_not_grow_with_tasks(api, board, make_task, tasks, django_assert_max_num_queries):
    backlog, _, _ = board
    for i in range(tasks):
        make_task(backlog, f"t{i}")
    with CaptureQueriesContext(connection) as queries:
        assert api.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").status_code == 200
    assert len(queries) == 6  # the role with the workflow, steps, tasks, sessions, agent figures, lanes (and cells)
