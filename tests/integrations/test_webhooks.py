"""Webhook intake: POST /hooks/<intake-id>/ and the intakes API."""

import json
import uuid
from collections import Counter

import pytest
from django.test import Client

from boards.models import Task, TaskEvent
from integrations.intake import signature_for
from integrations.models import Intake
from tests.concurrency import race_ok
from tests.conftest import board_state, member_client
from tests.factories import StepFactory
from workflows.models import OnFull, Role


def deliver(intake_id, secret, payload, *, client=None, signature=None, raw=None):
    body = raw if raw is not None else json.dumps(payload).encode()
    return (client or Client()).post(
        f"/hooks/{intake_id}/",
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature if signature is not None else signature_for(secret, body)},
    )


def create_intake(api, step=None, workflow=None):
    response = api.post(
        "/api/v1/intakes/",
        {
            "workflow_id": str((workflow or step.workflow).pk),
            "step_id": str(step.pk) if step else None,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    return response.json()["id"], response.json()["secret"]


class TestIntakesApi:
    def test_the_secret_is_shown_at_creation_only_and_stored_encrypted(self, api, board):
        _, doing, _ = board
        created = api.post(
            "/api/v1/intakes/",
            {"workflow_id": str(doing.workflow_id), "step_id": str(doing.pk)},
            format="json",
        )
        assert created.status_code == 201
        body = created.json()
        assert set(body) == {
            "id",
            "workflow_id",
            "step_id",
            "name",
            "url",
            "created_at",
            "created_by",
            "disabled_at",
            "disabled_reason",
            "secret",
        }
        assert body["url"] == f"/hooks/{body['id']}/"
        assert len(body["secret"]) >= 32
        fetched = api.get(f"/api/v1/intakes/{body['id']}/").json()
        listed = api.get("/api/v1/intakes/", {"workflow": str(doing.workflow_id)}).json()["results"]
        assert "secret" not in fetched and all("secret" not in item for item in listed)
        stored = Intake.objects.get(pk=body["id"])
        assert body["secret"] not in stored.secret_encrypted
        assert stored.secret() == body["secret"]

    def test_viewers_read_members_write_strangers_see_nothing(self, api, board):
        backlog, _, _ = board
        intake_id, _ = create_intake(api, backlog)
        viewer = member_client(backlog.workflow.workspace, Role.VIEWER)
        member = member_client(backlog.workflow.workspace, Role.MEMBER)
        stranger = member_client(StepFactory().workflow.workspace, Role.OWNER)
        assert viewer.get(f"/api/v1/intakes/{intake_id}/").status_code == 200
        refused = viewer.post("/api/v1/intakes/", {"workflow_id": str(backlog.workflow_id)}, format="json")
        assert refused.status_code == 403
        assert viewer.delete(f"/api/v1/intakes/{intake_id}/").status_code == 403
        assert stranger.get(f"/api/v1/intakes/{intake_id}/").status_code == 404
        assert stranger.get("/api/v1/intakes/").json()["count"] == 0
        assert stranger.post("/api/v1/intakes/", {"workflow_id": str(backlog.workflow_id)}, format="json").json()[
            "errors"
        ] == {"workflow_id": ["No such workflow."]}
        assert member.delete(f"/api/v1/intakes/{intake_id}/").status_code == 204
        assert not Intake.objects.exists()

    def test_a_step_of_another_workflow_is_refused(self, api, board):
        backlog, _, _ = board
        other = StepFactory()
        response = api.post(
            "/api/v1/intakes/",
            {"workflow_id": str(backlog.workflow_id), "step_id": str(other.pk)},
            format="json",
        )
        assert response.status_code == 400
        assert response.json()["errors"] == {"step_id": ["No such step in this workflow."]}
        assert not Intake.objects.exists()


class TestDelivery:
    def test_admitted_is_201_with_the_task(self, api, board):
        _, doing, _ = board
        intake_id, secret = create_intake(api, doing)
        response = deliver(intake_id, secret, {"title": "Outage", "priority": "high", "external_ref": "pd:1"})
        assert response.status_code == 201
        task = Task.objects.get()
        assert response.json()["id"] == str(task.pk)
        assert (task.step, task.title, task.priority_name, task.external_ref) == (
            doing,
            "Outage",
            "high",
            "pd:1",
        )

    def test_without_a_step_the_intake_feeds_the_start_step(self, api, board):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, workflow=backlog.workflow)
        assert deliver(intake_id, secret, {"title": "t", "external_ref": "x"}).status_code == 201
        # created in Backlog (then In Progress, which had room, pulled it)
        assert TaskEvent.objects.get(kind="created").to_step_id == backlog.pk

    def test_the_same_live_external_ref_is_200_and_creates_nothing(self, api, board):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, backlog)
        first = deliver(intake_id, secret, {"title": "t", "external_ref": "ext-1"})
        before = board_state(backlog.workflow)
        again = deliver(intake_id, secret, {"title": "t (retry)", "external_ref": "ext-1"})
        assert again.status_code == 200
        assert again.json() == {"id": first.json()["id"], "status": "known"}
        assert board_state(backlog.workflow) == before

    def test_a_known_ref_of_a_task_made_elsewhere_reveals_nothing_of_it(self, api, board, make_task):
        backlog, _, _ = board
        secret_task = make_task(backlog, "Acquire Initech", description="Board only", external_ref="deal-7")
        intake_id, secret = create_intake(api, backlog)
        response = deliver(intake_id, secret, {"title": "probe", "external_ref": "deal-7"})
        assert response.status_code == 200
        assert response.json() == {"id": str(secret_task.pk), "status": "known"}

    def test_full_step_is_429_without_retry_after_and_nothing_persists(self, api, board, make_task):
        _, doing, _ = board
        make_task(doing, "a")
        make_task(doing, "b")
        intake_id, secret = create_intake(api, doing)
        before = board_state(doing.workflow)
        response = deliver(intake_id, secret, {"title": "c", "external_ref": "ext-3"})
        assert response.status_code == 429
        assert "Retry-After" not in response.headers
        assert response.json() == {
            "code": "wip_limit_reached",
            "scope": "step",
            "detail": 'Step "In Progress" is at its WIP limit (2 of 2).',
            "step": {"id": str(doing.pk), "name": "In Progress"},
            "limit": 2,
            "occupied": 2,
        }
        assert board_state(doing.workflow) == before

    def test_full_queue_mode_step_is_202_and_the_task_waits(self, api, board, make_task):
        _, doing, _ = board
        doing.on_full = OnFull.QUEUE
        doing.save()
        make_task(doing, "a")
        make_task(doing, "b")
        intake_id, secret = create_intake(api, doing)
        response = deliver(intake_id, secret, {"title": "c", "external_ref": "ext-4"})
        assert response.status_code == 202
        assert response.json()["admitted"] is False
        assert Task.objects.queued().get().title == "c"

    @pytest.mark.parametrize(
        "signature",
        ["", "sha256=" + "0" * 64, "sha1=abc", "not-a-signature"],
        ids=["missing", "wrong", "other-algorithm", "garbage"],
    )
    def test_bad_or_missing_signature_is_403_and_nothing_persists(self, api, board, signature):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, backlog)
        response = deliver(intake_id, secret, {"title": "t", "external_ref": "x"}, signature=signature)
        assert response.status_code == 403
        assert response.json()["code"] == "bad_signature"
        assert board_state(backlog.workflow) == (0, 0, 0)

    def test_a_signature_made_with_another_intakes_secret_is_refused(self, api, board):
        backlog, _, _ = board
        intake_id, _ = create_intake(api, backlog)
        _, other_secret = create_intake(api, backlog)
        assert deliver(intake_id, other_secret, {"title": "t", "external_ref": "x"}).status_code == 403

    @pytest.mark.parametrize(
        ("raw", "errors"),
        [
            (b"{not json", {"body": ["Must be a JSON object."]}),
            (b"[1, 2]", {"body": ["Must be a JSON object."]}),
            (b'{"title": "t"}', {"external_ref": ["Please fill this in."]}),
            (b'{"external_ref": "x", "title": ""}', {"title": ["Please fill this in."]}),
            (
                b'{"external_ref": "x", "title": "t", "priority": "urgent"}',
                {"priority": ['"urgent" is not one of the choices.']},
            ),
        ],
    )
    def test_invalid_body_is_400_with_field_errors(self, api, board, raw, errors):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, backlog)
        response = deliver(intake_id, secret, None, raw=raw)
        assert response.status_code == 400
        assert response.json()["code"] == "invalid"
        assert response.json()["errors"] == errors
        assert board_state(backlog.workflow) == (0, 0, 0)

    def test_a_signed_body_nested_100000_deep_is_400(self, api, board):
        intake_id, secret = create_intake(api, board[0])
        response = deliver(intake_id, secret, None, raw=b"[" * 100_000 + b"]" * 100_000)
        assert response.status_code == 400
        assert response.json()["errors"] == {"body": ["Must be a JSON object."]}
        assert not Task.objects.exists()

    def test_a_signed_object_nested_too_deep_is_400(self, api, board):
        intake_id, secret = create_intake(api, board[0])
        payload = {"title": "t", "external_ref": "x", "deep": []}
        inner = payload["deep"]
        for _ in range(100):
            inner.append([])
            inner = inner[0]
        response = deliver(intake_id, secret, payload)
        assert response.status_code == 400
        assert response.json()["errors"] == {"body": ["Nested deeper than 32 levels."]}

    def test_a_unicode_digit_content_length_is_not_a_crash(self, api, board):
        intake_id, _ = create_intake(api, board[0])
        response = Client().post(
            f"/hooks/{intake_id}/", b"{}", content_type="application/json", CONTENT_LENGTH="\u00b2"
        )
        assert response.status_code == 400
        assert response.json()["errors"] == {"Content-Length": ["Must be a whole number of bytes."]}

    def test_over_256_kb_is_413(self, api, board):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, backlog)
        payload = {"title": "big", "external_ref": "x", "description": "x" * (256 * 1024)}
        response = deliver(intake_id, secret, payload)
        assert response.status_code == 413
        assert not Task.objects.exists()
        # Unknown fields are ignored, so padding shows the limit is the body's size.
        just_under = {"title": "ok", "external_ref": "y", "padding": "x" * (255 * 1024)}
        assert deliver(intake_id, secret, just_under).status_code == 201

    def test_unknown_intake_is_404_and_only_post_is_allowed(self, api, board):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, backlog)
        assert deliver(uuid.uuid4(), secret, {"title": "t", "external_ref": "x"}).status_code == 404
        assert Client().get(f"/hooks/{intake_id}/").status_code == 405

    def test_no_session_or_csrf_token_is_needed(self, api, board):
        backlog, _, _ = board
        intake_id, secret = create_intake(api, backlog)
        strict = Client(enforce_csrf_checks=True)
        assert deliver(intake_id, secret, {"title": "t", "external_ref": "x"}, client=strict).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_concurrent_redeliveries_of_one_external_ref_create_one_task(api, board):
    backlog, _, _ = board
    intake_id, secret = create_intake(api, backlog)
    for attempt in range(5):
        body = {"title": "t", "external_ref": f"ext-{attempt}"}
        statuses = race_ok(12, lambda i, body=body: deliver(intake_id, secret, body).status_code)
        assert Counter(statuses) == {201: 1, 200: 11}
        assert Task.objects.filter(external_ref=f"ext-{attempt}").count() == 1
