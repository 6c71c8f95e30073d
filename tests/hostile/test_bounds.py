"""Bounds: one request cannot make a board hold or run unbounded work.
Each refusal is a 400 naming the field, reached before any per-step work, leaving nothing."""

import json

import pytest

from tests.factories import StepFactory
from tests.hostile.test_input import footprint
from workflows.models import Workflow, WorkflowStep

MOVE = {"type": "move_to_next"}


def import_(api, workspace, document):
    return api.post(
        f"/api/v1/workspaces/{workspace.pk}/workflows/import/",
        data=json.dumps(document),
        content_type="application/json",
    )


def document(*workflows):
    return {"version": 1, "type": "kandev_workflow", "workflows": list(workflows)}


def workflow_doc(steps=None, **step0):
    steps = steps or [{"name": "Todo", "position": 0, **step0}, {"name": "Done", "position": 1}]
    return {"name": "Imported", "description": "", "steps": steps}


def step_list(n):
    return [{"name": f"S{i}", "position": i} for i in range(n)]


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ({"on_enter": [MOVE] * 11}, "on_enter holds at most 10 actions."),
        (
            {"on_enter": [{"type": "move_to_step", "config": {"step_id": "x"}}] * 3000},
            "on_enter holds at most 10 actions.",
        ),
        ({"on_exit": [{**MOVE, "junk": "x" * 900_000}]}, "on_exit: an action holds only type and config."),
        ({"on_exit": [{**MOVE, "config": {"note": "x"}}]}, "on_exit: move_to_next takes a config of nothing."),
        (
            {"on_exit": [{"type": "move_to_step", "config": {"step_id": [1]}}]},
            "on_exit: move_to_step needs config.step_id, a step of this workflow.",
        ),
    ],
)
def test_step_events_are_bounded_and_take_known_keys_only(api, board, events, message):
    backlog, doing, _ = board
    before = footprint()
    edited = api.patch(f"/api/v1/steps/{doing.pk}/", {"events": events}, format="json")
    created = api.post(
        "/api/v1/steps/", {"workflow_id": str(doing.workflow_id), "name": "New", "events": events}, format="json"
    )
    for response in (edited, created):
        assert response.status_code == 400
        assert response.json()["errors"] == {"events": [message]}
    assert footprint() == before


def test_a_workflow_holds_at_most_50_steps(api, workflow):
    StepFactory.create_batch(50, workflow=workflow)
    response = api.post("/api/v1/steps/", {"workflow_id": str(workflow.pk), "name": "51st"}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"] == {"workflow_id": ["A workflow holds at most 50 steps."]}
    assert WorkflowStep.objects.filter(workflow=workflow).count() == 50


class TestImportBounds:
    def test_12000_steps_are_refused_before_any_per_step_work(self, api, workflow, django_assert_max_num_queries):
        body = document(workflow_doc(), workflow_doc(step_list(12_000)))
        with django_assert_max_num_queries(8):  # the session, the role: no step is looked at
            response = import_(api, workflow.workspace, body)
        assert response.status_code == 400
        assert response.json()["errors"] == {"workflows[1].steps": ["A workflow holds at most 50 steps."]}
        assert Workflow.objects.count() == 1

    def test_50_steps_are_imported(self, api, workflow):
        assert import_(api, workflow.workspace, document(workflow_doc(step_list(50)))).status_code == 201

    def test_at_most_100_workflows_per_document(self, api, workflow):
        response = import_(api, workflow.workspace, document(*[workflow_doc()] * 101))
        assert response.status_code == 400
        assert response.json()["errors"] == {"workflows": ["A document holds at most 100 workflows."]}
        assert Workflow.objects.count() == 1

    @pytest.mark.parametrize(
        ("events", "message"),
        [
            (
                {"on_enter": [{"type": "move_to_step", "config": {"step_position": 1}}] * 3000},
                "on_enter holds at most 10 actions.",
            ),
            ({"on_exit": [{**MOVE, "junk": "x" * 900_000}]}, "on_exit: an action holds only type and config."),
            (
                {"on_exit": [{"type": "move_to_step", "config": {"step_position": 1, "junk": 1}}]},
                "on_exit: move_to_step takes a config of step_id.",
            ),
        ],
    )
    def test_imported_events_obey_the_same_rules(self, api, workflow, events, message):
        response = import_(api, workflow.workspace, document(workflow_doc(events=events)))
        assert response.status_code == 400
        assert response.json()["errors"] == {"workflows[0].steps[0].events": [message]}
        assert Workflow.objects.count() == 1
