from io import StringIO

import yaml
from django.core.management import call_command
from rest_framework.test import APIClient

from boards.models import Task
from tests.factories import UserFactory
from workflows.models import WorkflowStep


def test_health_endpoints(client, db):
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").json() == {"status": "ok"}


def test_create_api_token_prints_a_working_token_last(board):
    backlog, _, _ = board
    out = StringIO()
    call_command("create_api_token", "olivia", stdout=out)
    token = out.getvalue().split()[-1]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    response = client.get(f"/api/v1/workflows/{backlog.workflow_id}/board/")
    assert response.status_code == 200
    client.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert client.get("/api/v1/workspaces/").status_code == 401


def test_reconcile_once_fills_stranded_capacity(board, make_task):
    backlog, doing, _ = board
    make_task(doing), make_task(doing)
    make_task(backlog, "stranded")
    # Room opened outside the services (an operator's SQL, a crash after a commit): nothing filled it.
    WorkflowStep.objects.filter(pk=doing.pk).update(wip_limit=3)
    out = StringIO()
    call_command("reconcile", "--once", stdout=out)
    assert "1 board(s) changed" in out.getvalue()
    assert Task.objects.get(title="stranded").step == doing


def test_openapi_schema_and_docs_are_served(db):
    client = APIClient()
    client.force_authenticate(UserFactory())
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/tasks/{id}/move/" in schema.content
    assert client.get("/api/docs/").status_code == 200


def test_every_api_operation_is_tagged_by_its_resource_and_summed_up(db):
    client = APIClient()
    client.force_authenticate(UserFactory())
    paths = yaml.safe_load(client.get("/api/schema/").content)["paths"]
    operations = {(m, p): op for p, item in paths.items() for m, op in item.items()}
    assert all(len(op["tags"]) == 1 and op["tags"] != ["v1"] and op["summary"] for op in operations.values())
    assert {op["tags"][0] for op in operations.values()} == {
        "Activity",
        "Agent sessions",
        "Attachments",
        "Blocker types",
        "Boards",
        "Checklists",
        "Comments",
        "Flow analytics",
        "Labels",
        "Lanes",
        "Members and invites",
        "Notifications",
        "Outbound webhooks",
        "Review watches",
        "Step groups",
        "Steps",
        "Tasks",
        "Webhook intakes",
        "Workspaces",
        "Your account",
    }
    summaries = [op["summary"] for op in operations.values()]
    assert len(set(summaries)) == len(summaries)  # each says which operation it is
    move = operations[("post", "/api/v1/tasks/{id}/move/")]
    assert (move["tags"], move["summary"]) == (["Tasks"], "Move a task to a step (admitted by its limits)")
    assert operations[("get", "/api/v1/workflows/{id}/flow/cfd/")]["summary"] == "A board's cumulative flow diagram"
    assert operations[("delete", "/api/v1/tokens/{id}/")]["summary"] == "Delete an API token"
    assert operations[("post", "/api/v1/tasks/{task_id}/watch/")]["tags"] == ["Notifications"]
    assert operations[("patch", "/api/v1/webhooks/{id}/")]["summary"] == "Update a webhook"
