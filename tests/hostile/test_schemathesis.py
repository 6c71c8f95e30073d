"""Schemathesis against the OpenAPI schema (/api/schema/), in-process through WSGI.

Bounded and deterministic: 25 examples per operation, derandomized. Every response must be
a non-5xx that the schema documents (status, content type, body). Each operation runs
twice: with generated ids (mostly unknown: 404 paths, validation) and with the ids of
real objects of a seeded board (the handlers behind them, with fuzzed bodies).
"""

import json

import pytest
import schemathesis
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from accounts.models import ApiToken
from agents.services import session_start
from boards.admission import task_create
from boards.attachments import attachment_add
from boards.checklists import checklist_add
from boards.comments import comment_create
from boards.labels import label_create
from boards.links import link_create
from boards.structure import group_create
from integrations.intake import intake_create
from integrations.watch import watch_create
from notifications.webhooks import webhook_create
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows.models import Role

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
EXAMPLES = settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)

schema = schemathesis.openapi.from_dict(
    json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
)
schema.app = get_wsgi_application()


@pytest.fixture
def in_test_transaction():
    """Like Django's test client: requests must not close the test's connection."""
    for signal in (request_started, request_finished):
        signal.disconnect(close_old_connections)
    yield
    for signal in (request_started, request_finished):
        signal.connect(close_old_connections)


@pytest.fixture
def seeded(db, settings, in_test_transaction, tmp_path):
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {**settings.STORAGES["default"], "OPTIONS": {"location": str(tmp_path)}},
    }
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.KANDEV_TOKEN_CREATE_RATE = "100000/hour"
    owner = UserFactory(username="fuzz-owner")
    workflow = WorkflowFactory()
    MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    doing = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2, pull_from_step=backlog)
    group = group_create(workflow=workflow, actor=owner, name="All", wip_limit=100, step_ids=[backlog.pk, doing.pk])
    task = task_create(workflow=workflow, step=backlog, actor=owner, title="Seed").task
    token, key = ApiToken.issue(user=owner)
    intake, _ = intake_create(workflow=workflow, step=None, actor=owner, name="hooks")
    watch = watch_create(
        workflow=workflow, step=None, actor=owner, repositories=["acme/web"], reviewer_login="reviewer"
    )
    session = session_start(task=task, actor=owner)
    label = label_create(workspace_id=workflow.workspace_id, actor=owner, name="Seed", color="red")
    item = checklist_add(task=task, actor=owner, text="Seed")
    comment = comment_create(task=task, author=owner, body="Seed @fuzz-owner")
    webhook, _ = webhook_create(
        workspace=workflow.workspace, url="https://hooks.example.com/kandev", events=["task.moved"], actor=owner
    )
    attachment = attachment_add(task=task, actor=owner, upload=SimpleUploadedFile("seed.txt", b"seed", "text/plain"))
    blocker = task_create(workflow=workflow, step=backlog, actor=owner, title="Seed blocker").task
    link = link_create(blocker=blocker, dependent=task, actor=owner, field="blocked_by_task_id")
    ids = {
        "workspaces": workflow.workspace_id,
        "workflows": workflow.pk,
        "steps": backlog.pk,
        "step-groups": group.pk,
        "lanes": workflow.lanes.get().pk,
        "tasks": task.pk,
        "tokens": token.pk,
        "intakes": intake.pk,
        "review-watches": watch.pk,
        "sessions": session.pk,
        "labels": label.pk,
        "checklist-items": item.pk,
        "comments": comment["id"],
        "webhooks": webhook.pk,
        "attachments": attachment.pk,
        "links": link.pk,
    }
    return {"Authorization": f"Token {key}"}, {k: str(v) for k, v in ids.items()}


@schema.parametrize()
@EXAMPLES
def test_generated_requests(case, seeded):
    headers, _ = seeded
    case.call_and_validate(headers=headers, checks=CHECKS)


@schema.parametrize()
@EXAMPLES
def test_generated_requests_on_real_objects(case, seeded):
    headers, ids = seeded
    if "id" in (case.path_parameters or {}):
        collection = case.operation.path.split("/")[3]  # /api/v1/<collection>/{id}/...
        case.path_parameters["id"] = ids[collection]
    case.call_and_validate(headers=headers, checks=CHECKS)
