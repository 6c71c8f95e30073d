"""200 concurrent signed deliveries into a limit-5 step, through uvicorn with 2 workers."""

import json
from collections import Counter

import httpx
import pytest

from boards.models import Task, TaskEvent
from integrations.intake import intake_create, signature_for
from tests.concurrency import race_ok
from tests.servers import Server, serving_test_database
from workflows.models import Workflow

DELIVERIES = 200
LIMIT = 5


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_flood_into_a_limit_5_step_admits_exactly_5_and_refuses_the_rest_with_429(board, owner):
    _, doing, _ = board
    doing.wip_limit = LIMIT
    doing.save()
    intake, secret = intake_create(workflow=doing.workflow, step=doing, actor=owner)
    bodies = [json.dumps({"title": f"alert {i}", "external_ref": f"alert-{i}"}).encode() for i in range(DELIVERIES)]
    with (
        # Each concurrent ASGI request has its own thread and connection: without a bounded
        # pool per worker (the setting for several workers) a burst of 200 exhausts PostgreSQL.
        Server(serving_test_database(DATABASE_POOL_MAX_SIZE="8"), workers=2) as server,
        httpx.Client(base_url=server.url, timeout=120, limits=httpx.Limits(max_connections=DELIVERIES)) as client,
    ):

        def send(i: int) -> tuple[int, dict, bool]:
            body = bodies[i]
            response = client.post(
                f"/hooks/{intake.pk}/",
                content=body,
                headers={
                    "Content-Type": "application/json",
                    "X-Hub-Signature-256": signature_for(secret, body),
                },
            )
            return response.status_code, response.json(), "Retry-After" in response.headers

        answers = race_ok(DELIVERIES, send)

    assert Counter(status for status, _, _ in answers) == {201: LIMIT, 429: DELIVERIES - LIMIT}
    refusals = [body for status, body, _ in answers if status == 429]
    assert {(b["code"], b["limit"], b["occupied"]) for b in refusals} == {("wip_limit_reached", LIMIT, LIMIT)}
    assert not any(retry_after for _, _, retry_after in answers)
    admitted = {body["id"] for status, body, _ in answers if status == 201}
    assert set(map(str, Task.objects.values_list("id", flat=True))) == admitted
    assert Task.objects.occupying().filter(step=doing).count() == LIMIT
    # Nothing of a refused delivery persisted: one event per admitted task, one version each.
    assert TaskEvent.objects.count() == LIMIT
    assert Workflow.objects.get(pk=doing.workflow_id).version == LIMIT
