"""Step kinds: the step API, the templates, export and import."""

import pytest
import yaml

from boards import structure
from common.errors import Invalid
from tests.conftest import board_state
from tests.workflows.test_portable import export, import_, persisted, valid_document
from workflows import services
from workflows.models import Workflow, WorkflowStep


def kinds_of(workflow) -> list[tuple[str, str]]:
    return list(WorkflowStep.objects.filter(workflow=workflow).order_by("position").values_list("name", "kind"))


class TestStepApi:
    def test_every_step_shows_its_kind(self, api, workflow, board):
        listed = api.get("/api/v1/steps/", {"workflow": str(workflow.pk)}).json()["results"]
        assert [(s["name"], s["kind"]) for s in listed] == [
            ("Backlog", "backlog"),
            ("In Progress", "active"),
            ("Done", "done"),
        ]
        assert api.get(f"/api/v1/steps/{board[2].pk}/").json()["kind"] == "done"
        board_steps = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()["steps"]
        assert [s["kind"] for s in board_steps] == ["backlog", "active", "done"]

    def test_a_new_step_is_active_unless_told(self, api, workflow, board):
        plain = api.post("/api/v1/steps/", {"workflow_id": str(workflow.pk), "name": "QA"}, format="json")
        shipped = api.post(
            "/api/v1/steps/", {"workflow_id": str(workflow.pk), "name": "Shipped", "kind": "done"}, format="json"
        )
        assert (plain.status_code, plain.json()["kind"]) == (201, "active")
        assert (shipped.status_code, shipped.json()["kind"]) == (201, "done")
        assert WorkflowStep.objects.get(pk=shipped.json()["id"]).kind == "done"

    def test_patch_changes_the_kind_and_nothing_else(self, api, board):
        backlog, doing, _ = board
        before = api.get(f"/api/v1/steps/{doing.pk}/").json()
        response = api.patch(f"/api/v1/steps/{doing.pk}/", {"kind": "backlog"}, format="json")
        assert response.status_code == 200
        assert response.json() == {**before, "kind": "backlog"}
        assert WorkflowStep.objects.get(pk=doing.pk).kind == "backlog"

    @pytest.mark.parametrize("kind", ["urgent", "", "DONE", None, 3, ["done"]])
    def test_an_unknown_kind_is_400_naming_the_field_and_changes_nothing(self, api, workflow, board, kind):
        doing = board[1]
        before = (board_state(workflow), kinds_of(workflow))
        patched = api.patch(f"/api/v1/steps/{doing.pk}/", {"kind": kind}, format="json")
        created = api.post(
            "/api/v1/steps/", {"workflow_id": str(workflow.pk), "name": "QA", "kind": kind}, format="json"
        )
        for response in (patched, created):
            assert response.status_code == 400
            body = response.json()
            assert body["code"] == "invalid"
            assert list(body["errors"]) == ["kind"]
        assert (board_state(workflow), kinds_of(workflow)) == before

    def test_the_service_refuses_an_unknown_kind_too(self, workflow, board, owner):
        with pytest.raises(Invalid) as refused:
            structure.step_update(step=board[1], actor=owner, kind="urgent")
        assert list(refused.value.extra["errors"]) == ["kind"]
        assert WorkflowStep.objects.get(pk=board[1].pk).kind == "active"


class TestTemplates:
    EXPECTED = {
        "kanban": [
            ("Backlog", "backlog"),
            ("Ready", "backlog"),
            ("In Progress", "active"),
            ("Review", "active"),
            ("Done", "done"),
        ],
        "agent_pipeline": [("Backlog", "backlog"), ("In Progress", "active"), ("Review", "active"), ("Done", "done")],
        "pr_review": [("Waiting", "backlog"), ("Review", "active"), ("Done", "done")],
    }

    def test_templates_list_their_kinds(self, api):
        listed = {t["id"]: t for t in api.get("/api/v1/workflow-templates/").json()}
        for template_id, expected in self.EXPECTED.items():
            assert [(s["name"], s["kind"]) for s in listed[template_id]["steps"]] == expected

    @pytest.mark.parametrize("template_id", ["kanban", "agent_pipeline", "pr_review"])
    def test_a_board_from_a_template_gets_its_kinds(self, api, workflow, template_id):
        response = api.post(
            "/api/v1/workflows/",
            {"workspace_id": str(workflow.workspace_id), "name": "From template", "template": template_id},
            format="json",
        )
        assert response.status_code == 201
        assert kinds_of(Workflow.objects.get(pk=response.json()["id"])) == self.EXPECTED[template_id]


class TestPortable:
    def test_export_carries_kinds_and_import_restores_them(self, api, workflow, owner):
        board = services.workflow_create(workspace=workflow.workspace, name="Team board", template="agent_pipeline")
        review = board.steps.get(name="Review")
        structure.step_update(step=review, actor=owner, kind="done")  # a team that ends at Review
        document = yaml.safe_load(export(api, board).content)
        assert [s["kind"] for s in document["workflows"][0]["steps"]] == ["backlog", "active", "done", "done"]
        target = services.workspace_create(name="Elsewhere", owner=owner)
        response = import_(api, target, document)
        assert response.status_code == 201, response.json()
        [created] = response.json()["workflows"]
        assert [s["kind"] for s in created["steps"]] == ["backlog", "active", "done", "done"]
        assert kinds_of(Workflow.objects.get(pk=created["id"])) == kinds_of(board)

    def test_a_document_from_before_kinds_imports_every_step_as_active(self, api, workflow):
        document = valid_document()
        assert not any("kind" in s for s in document["workflows"][0]["steps"])
        response = import_(api, workflow.workspace, document)
        assert response.status_code == 201, response.json()
        created = Workflow.objects.get(pk=response.json()["workflows"][0]["id"])
        assert kinds_of(created) == [("Todo", "active"), ("Doing", "active"), ("Done", "active")]

    @pytest.mark.parametrize("kind", ["urgent", None, 1, {"done": True}])
    def test_an_unknown_kind_is_400_naming_the_step_field_and_imports_nothing(self, api, workflow, kind):
        before = persisted()
        response = import_(api, workflow.workspace, valid_document(s2={"kind": kind}), "application/json")
        assert response.status_code == 400
        body = response.json()
        assert body["code"] == "invalid"
        assert list(body["errors"]) == ["workflows[0].steps[2].kind"], body
        assert persisted() == before
