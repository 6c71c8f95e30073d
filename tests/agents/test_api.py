"""The sessions REST API and the runner protocol."""

import io

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from agents.models import AgentSession, SessionStatus
from tests.agents.conftest import AUTO_START, session_of
from tests.conftest import member_client
from tests.factories import StepFactory, UserFactory, WorkflowFactory
from workflows.models import Membership, Role

S = SessionStatus


def token_client(*args) -> APIClient:
    out = io.StringIO()
    call_command("create_api_token", *args, stdout=out)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {out.getvalue().split()[-1]}")
    return client


@pytest.fixture
def plain_step(workflow):
    return StepFactory(workflow=workflow, name="Plain", position=1)


class TestStart:
    def test_starts_then_queues_at_the_limit(self, api, plain_step, make_task):
        plain_step.workflow.max_parallel_sessions = 1
        plain_step.workflow.save()
        first, second = make_task(plain_step, "first"), make_task(plain_step, "second")
        response = api.post(f"/api/v1/tasks/{first.pk}/sessions/", {}, format="json")
        assert response.status_code == 201
        assert response.json()["status"] == "starting"
        assert set(response.json()) >= {
            "id",
            "task_id",
            "workflow_id",
            "step_id",
            "status",
            "runner",
            "queued_at",
            "started_at",
            "finished_at",
        }
        response = api.post(f"/api/v1/tasks/{second.pk}/sessions/", {}, format="json")
        assert (response.status_code, response.json()["status"]) == (202, "queued")

    def test_a_second_live_session_is_409(self, api, plain_step, make_task):
        task = make_task(plain_step)
        api.post(f"/api/v1/tasks/{task.pk}/sessions/", {}, format="json")
        response = api.post(f"/api/v1/tasks/{task.pk}/sessions/", {}, format="json")
        assert (response.status_code, response.json()["code"]) == (409, "session_already_live")

    def test_force_needs_an_owner_and_a_reason(self, api, plain_step, make_task):
        task = make_task(plain_step)
        member = member_client(plain_step.workflow.workspace, Role.MEMBER)
        body = {"force": True, "reason": "incident"}
        assert member.post(f"/api/v1/tasks/{task.pk}/sessions/", body, format="json").status_code == 403
        response = api.post(f"/api/v1/tasks/{task.pk}/sessions/", {"force": True}, format="json")
        assert (response.status_code, list(response.json()["errors"])) == (400, ["reason"])
        response = api.post(f"/api/v1/tasks/{task.pk}/sessions/", body, format="json")
        assert response.status_code == 201 and response.json()["forced"] is True

    def test_viewers_get_403_and_strangers_404(self, plain_step, make_task):
        task = make_task(plain_step)
        viewer = member_client(plain_step.workflow.workspace, Role.VIEWER)
        stranger = APIClient()
        stranger.force_authenticate(UserFactory())
        assert viewer.post(f"/api/v1/tasks/{task.pk}/sessions/", {}, format="json").status_code == 403
        assert stranger.post(f"/api/v1/tasks/{task.pk}/sessions/", {}, format="json").status_code == 404
        assert not AgentSession.objects.exists()


class TestRunnerProtocol:
    def test_claim_events_and_cancel(self, api, agent_step, make_task):
        assert api.post("/api/v1/sessions/claim/", {}, format="json").status_code == 204
        task = make_task(agent_step, "Fix the login bug", description="Users cannot log in.")
        response = api.post("/api/v1/sessions/claim/", {"runner": "gpu-1"}, format="json")
        assert response.status_code == 200
        claimed = response.json()
        assert (claimed["runner"], claimed["task"]["title"], claimed["step"]["name"]) == (
            "gpu-1",
            "Fix the login bug",
            "Agents",
        )
        assert claimed["lease_seconds"] == 60
        url = f"/api/v1/sessions/{claimed['id']}/"
        assert api.post(url + "events/", {"type": "boot_ready"}, format="json").json()["status"] == "running"
        assert api.post(url + "events/", {"type": "heartbeat"}, format="json").status_code == 200
        response = api.post(url + "events/", {"type": "dance"}, format="json")
        assert (response.status_code, list(response.json()["errors"])) == (400, ["type"])
        response = api.post(url + "cancel/", {"reason": "not needed"}, format="json")
        assert (response.json()["status"], response.json()["detail"]) == ("cancelled", "not needed")
        response = api.post(url + "events/", {"type": "turn_completed"}, format="json")
        assert response.status_code == 409
        assert response.json()["code"] == "illegal_session_transition"
        assert session_of(task).status == S.CANCELLED

    def test_list_filters_by_workflow_and_status(self, api, agent_step, make_task, owner):
        other = WorkflowFactory(workspace=agent_step.workflow.workspace)
        other_step = StepFactory(workflow=other, name="Agents", position=0, events=AUTO_START)
        make_task(agent_step, "here")
        make_task(other_step, "there")
        api.post("/api/v1/sessions/claim/", {}, format="json")
        response = api.get(f"/api/v1/sessions/?workflow={other.pk}")
        assert [s["workflow_id"] for s in response.json()["results"]] == [str(other.pk)]
        response = api.get("/api/v1/sessions/?status=starting")
        assert response.json()["count"] == 2
        assert api.get("/api/v1/sessions/?status=bogus").status_code == 400

    def test_list_filters_by_task(self, api, agent_step, make_task):
        here, there = make_task(agent_step, "here"), make_task(agent_step, "there")
        response = api.get(f"/api/v1/sessions/?task={here.pk}")
        assert [s["task_id"] for s in response.json()["results"]] == [str(here.pk)]
        assert there and api.get("/api/v1/sessions/?task=nope").status_code == 400

    def test_non_members_see_nothing(self, agent_step, make_task):
        make_task(agent_step)
        stranger = APIClient()
        stranger.force_authenticate(UserFactory())
        assert stranger.get("/api/v1/sessions/").json()["count"] == 0
        assert stranger.post("/api/v1/sessions/claim/", {}, format="json").status_code == 204
        session = AgentSession.objects.get()
        response = stranger.post(f"/api/v1/sessions/{session.pk}/cancel/", {}, format="json")
        assert response.status_code == 404


class TestScopedTokens:
    def test_a_workspace_token_only_reaches_that_workspaces_sessions(self, owner, agent_step, make_task):
        elsewhere = WorkflowFactory()
        Membership.objects.create(workspace=elsewhere.workspace, user=owner, role=Role.OWNER)
        elsewhere_step = StepFactory(workflow=elsewhere, name="Agents", position=0, events=AUTO_START)
        make_task(elsewhere_step, "elsewhere")
        here = make_task(agent_step, "here")
        runner = token_client(owner.username, "--name", "runner-a", "--workspace", agent_step.workflow.workspace.slug)

        listed = runner.get("/api/v1/sessions/").json()
        assert [s["task_id"] for s in listed["results"]] == [str(here.pk)]
        claimed = runner.post("/api/v1/sessions/claim/", {}, format="json").json()
        assert (claimed["task_id"], claimed["runner"]) == (str(here.pk), "runner-a")
        assert runner.post("/api/v1/sessions/claim/", {}, format="json").status_code == 204
        other = AgentSession.objects.get(task__title="elsewhere")
        assert runner.post(f"/api/v1/sessions/{other.pk}/cancel/", {}, format="json").status_code == 404

    def test_a_workspace_token_cannot_use_the_rest_of_the_api(self, owner, agent_step, make_task):
        task = make_task(agent_step)
        runner = token_client(owner.username, "--workspace", agent_step.workflow.workspace.slug)
        assert runner.get("/api/v1/tasks/").status_code == 403
        assert runner.post(f"/api/v1/tasks/{task.pk}/sessions/", {}, format="json").status_code == 403
        assert token_client(owner.username).get("/api/v1/tasks/").status_code == 200

    def test_scoping_to_a_workspace_the_user_is_not_in_is_refused(self, owner):
        with pytest.raises(CommandError):
            call_command("create_api_token", owner.username, "--workspace", "nowhere", stdout=io.StringIO())
