"""Workflow templates (product.md §4) and the demo board built from one."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from boards.models import Task
from tests.conftest import member_client
from workflows import services
from workflows.models import Role, Workflow, Workspace
from workflows.portable import export_steps, templates


def create_from(api, workspace, template, name="From a template"):
    return api.post(
        "/api/v1/workflows/",
        {"workspace_id": str(workspace.pk), "name": name, "template": template},
        format="json",
    )


def board_of(api, workflow_id):
    return api.get(f"/api/v1/workflows/{workflow_id}/board/").json()


def test_templates_are_listed_with_their_limits_feeders_and_events(api):
    response = api.get("/api/v1/workflow-templates/")
    assert response.status_code == 200
    listed = {t["id"]: t for t in response.json()}
    assert {"kanban", "pr_review"} <= set(listed)
    kanban = listed["kanban"]
    assert kanban["name"] == "Kanban"
    in_progress = kanban["steps"][1]
    assert (in_progress["wip_limit"], in_progress["pull_from_step_position"]) == (3, 0)
    assert in_progress["on_full"] == "reject"
    assert in_progress["events"]["on_enter"] == [{"type": "auto_start_agent"}]


def test_kanban_builds_its_steps_limits_feeder_events_and_start_step(api, workflow):
    response = create_from(api, workflow.workspace, "kanban")
    assert response.status_code == 201
    steps = board_of(api, response.json()["id"])["steps"]
    ids = {s["name"]: s["id"] for s in steps}
    assert [(s["name"], s["position"], s["wip_limit"], s["pull_from_step_id"], s["on_full"]) for s in steps] == [
        ("Backlog", 0, 0, None, "reject"),
        ("In Progress", 1, 3, ids["Backlog"], "reject"),
        ("Review", 2, 2, ids["In Progress"], "reject"),
        ("Done", 3, 0, None, "reject"),
    ]
    assert [s["name"] for s in steps if s["is_start_step"]] == ["In Progress"]
    assert steps[1]["events"] == {
        "on_enter": [{"type": "auto_start_agent"}],
        "on_turn_complete": [],
        "on_exit": [],
    }


def test_pr_review_builds_waiting_review_done(api, workflow):
    response = create_from(api, workflow.workspace, "pr_review")
    assert response.status_code == 201
    steps = board_of(api, response.json()["id"])["steps"]
    assert [(s["name"], s["is_start_step"], s["wip_limit"]) for s in steps] == [
        ("Waiting", True, 0),
        ("Review", False, 2),
        ("Done", False, 0),
    ]
    review = steps[1]
    assert review["pull_from_step_id"] == steps[0]["id"]
    assert review["events"]["on_enter"] == [{"type": "auto_start_agent"}]
    assert review["events"]["on_turn_complete"] == [{"type": "move_to_next"}]


def test_a_template_board_enforces_its_limit_and_pulls(api, workflow):
    workflow_id = create_from(api, workflow.workspace, "pr_review").json()["id"]
    waiting, review, done = board_of(api, workflow_id)["steps"]
    for title in ("pr-1", "pr-2", "pr-3"):
        api.post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": title}, format="json")
    # Review (limit 2) pulled what fits as the tasks arrived; the third waits
    steps = board_of(api, workflow_id)["steps"]
    assert [[t["title"] for t in s["tasks"]] for s in steps] == [["pr-3"], ["pr-1", "pr-2"], []]
    (third,) = steps[0]["tasks"]
    refused = api.post(f"/api/v1/tasks/{third['id']}/move/", {"step_id": review["id"]}, format="json")
    assert refused.status_code == 409
    first = steps[1]["tasks"][0]
    api.post(f"/api/v1/tasks/{first['id']}/move/", {"step_id": done["id"]}, format="json")
    steps = board_of(api, workflow_id)["steps"]
    assert [t["title"] for t in steps[1]["tasks"]] == ["pr-2", "pr-3"]
    assert steps[0]["tasks"] == []


@pytest.mark.parametrize("template_id", sorted(templates()))
def test_every_template_exports_back_to_its_own_steps(workflow, template_id):
    built = services.workflow_create(workspace=workflow.workspace, name="t", template=template_id)
    expected = [{"pull_from_step_position": None, **s} for s in templates()[template_id]["steps"]]
    assert export_steps(list(built.steps.all())) == sorted(expected, key=lambda s: s["position"])


def test_unknown_template_is_400_and_creates_nothing(api, workflow):
    response = create_from(api, workflow.workspace, "scrum")
    assert response.status_code == 400
    assert "template" in response.json()["errors"]
    assert Workflow.objects.count() == 1


def test_viewers_cannot_create_from_a_template(workflow):
    viewer = member_client(workflow.workspace, Role.VIEWER)
    assert create_from(viewer, workflow.workspace, "kanban").status_code == 403
    assert Workflow.objects.count() == 1


class TestSeedDemo:
    def run(self):
        out = io.StringIO()
        call_command("seed_demo", stdout=out)
        return out.getvalue()

    def test_prints_a_working_login_every_time_and_seeds_once(self, db, monkeypatch):
        monkeypatch.delenv("PORT", raising=False)
        first, second = self.run(), self.run()
        assert first == second
        assert "http://127.0.0.1:8000/accounts/login/" in first
        assert "username: demo" in first
        password = re.search(r"password: (\S+)", first).group(1)
        assert APIClient().login(username="demo", password=password)
        assert Workspace.objects.filter(name="Demo").count() == 1
        assert Workflow.objects.filter(name="Demo board").count() == 1
        assert Task.objects.live().count() == 17  # and a month of archived history (flow/demo.py)

    def test_the_demo_board_is_full_where_it_pulls_and_ranked_by_priority(self, db):
        self.run()
        board = Workflow.objects.get(name="Demo board")
        client = APIClient()
        client.force_login(board.workspace.memberships.get(role=Role.OWNER).user)
        backlog, in_progress, review, done = board_of(client, board.pk)["steps"]
        assert (in_progress["wip_limit"], in_progress["occupied"]) == (3, 3)
        assert in_progress["pull_from_step_id"] == backlog["id"]
        assert (review["wip_limit"], review["occupied"]) == (2, 2)
        assert len(backlog["tasks"]) == 12
        assert len({t["priority"] for t in backlog["tasks"]}) >= 3
        assert [t["priority"] for t in review["tasks"]] == ["critical", "critical"]
        assert done["tasks"] == []
        # The pull is visible at once: finishing a task pulls the next one through.
        finished = client.post(
            f"/api/v1/tasks/{review['tasks'][0]['id']}/move/",
            {"step_id": done["id"]},
            format="json",
        )
        assert finished.status_code == 200
        backlog, in_progress, review, _ = board_of(client, board.pk)["steps"]
        assert (len(backlog["tasks"]), in_progress["occupied"], review["occupied"]) == (11, 3, 2)

    def test_a_changed_password_is_not_reset_unless_asked(self, db):
        self.run()
        demo = get_user_model().objects.get(username="demo")
        demo.set_password("something-else-entirely")
        demo.save()
        assert "changed since it was seeded" in self.run()
        out = io.StringIO()
        call_command("seed_demo", "--reset-password", stdout=out)
        password = re.search(r"password: (\S+)", out.getvalue()).group(1)
        assert APIClient().login(username="demo", password=password)
