"""Workflow templates and the demo board built from one."""

import io
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from agents.models import AgentSession
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


HUMAN = ["kanban", "scrum", "support"]
AGENTS = ["agent_pipeline", "pr_review"]


def test_templates_are_listed_for_people_first_each_saying_what_it_does(api):
    response = api.get("/api/v1/workflow-templates/")
    assert response.status_code == 200
    listed = response.json()
    assert [t["id"] for t in listed] == HUMAN + AGENTS
    assert [t["starts_agents"] for t in listed] == [False] * 3 + [True] * 2
    kanban = listed[0]
    assert kanban["name"] == "Kanban"
    assert "commits" in kanban["description"]
    assert kanban["summary"] == (
        "Backlog → Ready (limit 5) → In Progress (limit 3, pulls from Ready) → Review (limit 2) → Done. No agents."
    )
    assert listed[3]["summary"] == (
        "Backlog → In Progress (limit 3, pulls from Backlog, starts an agent) → Review (limit 2, pulls from "
        "In Progress) → Done. Starts agents: needs a runner."
    )


def test_kanban_has_a_commitment_point_and_starts_no_agent(api, workflow):
    response = create_from(api, workflow.workspace, "kanban")
    assert response.status_code == 201
    steps = board_of(api, response.json()["id"])["steps"]
    ids = {s["name"]: s["id"] for s in steps}
    assert [(s["name"], s["position"], s["kind"], s["wip_limit"], s["pull_from_step_id"]) for s in steps] == [
        ("Backlog", 0, "backlog", 0, None),
        ("Ready", 1, "backlog", 5, None),
        ("In Progress", 2, "active", 3, ids["Ready"]),
        ("Review", 3, "active", 2, None),
        ("Done", 4, "done", 0, None),
    ]
    assert [s["name"] for s in steps if s["is_start_step"]] == ["Backlog"]
    assert all(s["events"] == {"on_enter": [], "on_turn_complete": [], "on_exit": []} for s in steps)


@pytest.mark.parametrize("template_id", HUMAN + AGENTS)
def test_every_template_starts_at_its_first_step(template_id):
    steps = sorted(templates()[template_id]["steps"], key=lambda s: s["position"])
    assert [s["is_start_step"] for s in steps] == [True] + [False] * (len(steps) - 1)


@pytest.mark.parametrize("template_id", HUMAN)
def test_a_human_template_holds_its_options_and_starts_no_agent(template_id):
    """Nothing pulls from the start step (people commit to a card by moving it) and no step
    starts an agent."""
    steps = templates()[template_id]["steps"]
    assert all(s.get("pull_from_step_position") != 0 for s in steps)
    assert not any(actions for s in steps for actions in s["events"].values())


def test_ideas_typed_into_a_kanban_board_stay_in_backlog_until_someone_commits(api, workflow):
    workflow_id = create_from(api, workflow.workspace, "kanban").json()["id"]
    created = [
        api.post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": f"idea {n}"}, format="json") for n in range(5)
    ]
    assert [r.status_code for r in created] == [201] * 5
    steps = board_of(api, workflow_id)["steps"]
    assert [len(s["tasks"]) for s in steps] == [5, 0, 0, 0, 0]
    assert AgentSession.objects.count() == 0
    # Committing to one (moving it to Ready) lets In Progress pull it at once.
    ready = steps[1]["id"]
    moved = api.post(f"/api/v1/tasks/{created[0].json()['id']}/move/", {"step_id": ready}, format="json")
    assert moved.status_code == 200
    steps = board_of(api, workflow_id)["steps"]
    assert [[t["title"] for t in s["tasks"]] for s in steps][:3] == [[f"idea {n}" for n in range(1, 5)], [], ["idea 0"]]
    assert AgentSession.objects.count() == 0


def test_the_agent_pipeline_pulls_from_backlog_and_starts_an_agent(api, workflow):
    workflow_id = create_from(api, workflow.workspace, "agent_pipeline").json()["id"]
    api.post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": "fix the build"}, format="json")
    backlog, in_progress, _, _ = board_of(api, workflow_id)["steps"]
    assert (backlog["tasks"], [t["title"] for t in in_progress["tasks"]]) == ([], ["fix the build"])
    assert AgentSession.objects.get().task.title == "fix the build"


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
    response = create_from(api, workflow.workspace, "waterfall")
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
        backlog, ready, in_progress, review, done = board_of(client, board.pk)["steps"]
        assert in_progress["pull_from_step_id"] == ready["id"]
        assert backlog["is_start_step"] and ready["pull_from_step_id"] is None
        assert (ready["wip_limit"], ready["occupied"]) == (5, 4)
        assert (in_progress["wip_limit"], in_progress["occupied"]) == (3, 3)
        assert (review["wip_limit"], review["occupied"]) == (2, 2)
        assert len(backlog["tasks"]) == 8
        assert len({t["priority"] for t in backlog["tasks"]}) >= 3
        assert [t["priority"] for t in review["tasks"]] == ["critical", "critical"]
        assert [t["priority"] for t in in_progress["tasks"]] == ["high"] * 3
        assert done["tasks"] == []
        # The pull is visible at once: a task leaving In Progress pulls the next one from Ready.
        finished = client.post(
            f"/api/v1/tasks/{in_progress['tasks'][0]['id']}/move/",
            {"step_id": done["id"]},
            format="json",
        )
        assert finished.status_code == 200
        backlog, ready, in_progress, _, _ = board_of(client, board.pk)["steps"]
        assert (len(backlog["tasks"]), ready["occupied"], in_progress["occupied"]) == (8, 3, 3)

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
