"""Webhook intake: verify a delivery, then create its task through admission.

Status codes: 201 admitted, 202 queued, 200 already known (a live task has the
same external_ref), 429 full and refusing, 403 bad signature, 400 bad body, 413 too large,
and 403 `intake_disabled` once the signature verifies, when its creator's authority ended
(integrations.credentials): the sender holding the secret learns why its deliveries stopped,
a caller without it learns no more than before.
"""

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from django.db import transaction
from rest_framework import serializers

from boards import admission
from boards.models import Priority, Task
from boards.serializers import PriorityField, TitleField
from common.errors import Conflict, Invalid, KandevError, WipLimitReached
from common.parsers import TooDeep, load_json
from common.text import clean_text
from common.validation import validated
from integrations import credentials
from integrations.models import Intake
from workflows.models import Workflow, WorkflowStep

MAX_BODY_BYTES = 256 * 1024
SIGNATURE_HEADER = "X-Hub-Signature-256"


class BadSignature(KandevError):
    status_code = 403
    code = "bad_signature"


class IntakeDisabled(KandevError):
    status_code = 403
    code = "intake_disabled"


class BodyTooLarge(KandevError):
    status_code = 413
    code = "too_large"


@dataclass(frozen=True)
class Delivery:
    status: int
    task: Task | None = None
    error: KandevError | None = None
    # A live task already had this external_ref: it may have come from anywhere (made by
    # hand, another intake), so the sender learns only its id.
    known: bool = False


class DeliverySerializer(serializers.Serializer):
    title = TitleField()
    description = serializers.CharField(default="", allow_blank=True, max_length=100_000)
    priority = PriorityField(required=False)
    external_ref = serializers.CharField(max_length=300)

    def validate_description(self, value):
        return clean_text(value, multiline=True)

    def validate_external_ref(self, value):
        return clean_text(value)


def intake_create(*, workflow: Workflow, step: WorkflowStep | None, actor, name: str = "") -> tuple[Intake, str]:
    """A new intake and its secret (the only time the plain secret leaves kandev)."""
    if step is not None and step.workflow_id != workflow.pk:
        raise Invalid({"step_id": ["This step is not in the given workflow."]})
    secret = secrets.token_urlsafe(32)
    intake = Intake(workflow=workflow, step=step, name=name, created_by=actor)
    intake.set_secret(secret)
    intake.save(force_insert=True)
    return intake, secret


@transaction.atomic
def intake_rotate_secret(*, intake: Intake, actor, take_over: bool = False) -> tuple[Intake, str]:
    """A new secret, shown once; the old one stops verifying at once. Taking over (an owner)
    also makes `actor` the creator and lets a disabled intake work again: always with a new
    secret, since the former creator has seen the old one."""
    intake = Intake.objects.select_for_update(of=("self",)).select_related("workflow").get(pk=intake.pk)
    changed = credentials.taken_over(intake, actor=actor) if take_over else []
    secret = secrets.token_urlsafe(32)
    intake.set_secret(secret)
    intake.save(update_fields=["secret_encrypted", *changed])
    return intake, secret


def signature_for(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(*, intake: Intake, body: bytes, header: str | None) -> None:
    if not header or not hmac.compare_digest(signature_for(intake.secret(), body), header.strip()):
        raise BadSignature(f"Missing or invalid {SIGNATURE_HEADER} signature.")


def parse_body(body: bytes) -> dict:
    try:
        payload = load_json(body)
    except TooDeep as exc:
        raise Invalid({"body": [str(exc)]}) from None
    except ValueError:
        raise Invalid({"body": ["Must be a JSON object."]}) from None
    if not isinstance(payload, dict):
        raise Invalid({"body": ["Must be a JSON object."]})
    return validated(DeliverySerializer, payload)


def deliver(*, intake: Intake, body: bytes, signature: str | None) -> Delivery:
    """Authenticate first (nothing is parsed for an unsigned caller), then admit."""
    if len(body) > MAX_BODY_BYTES:
        raise BodyTooLarge(f"The body exceeds {MAX_BODY_BYTES} bytes.")
    verify_signature(intake=intake, body=body, header=signature)
    if credentials.lapsed(intake):
        raise IntakeDisabled("This intake is disabled; a workspace owner can take it over to enable it again.")
    data = parse_body(body)
    try:
        result = admission.task_create(
            workflow=intake.workflow,
            step=intake.step,
            actor=None,
            title=data["title"],
            description=data["description"],
            priority=data.get("priority", Priority.MEDIUM),
            external_ref=data["external_ref"],
        )
    except WipLimitReached as refused:
        # 429, not 409: senders retry with exponential back-off; nothing was created.
        return Delivery(status=429, error=refused)
    except Conflict as known:
        if known.code != "external_ref_exists":
            raise
        existing = Task.objects.filter(
            workflow=intake.workflow, external_ref=data["external_ref"], archived_at__isnull=True
        ).first()
        # None only if that task was archived meanwhile: answer with the conflict itself.
        return Delivery(status=200, task=existing, error=None if existing else known, known=True)
    return Delivery(status=202 if result.queued else 201, task=result.task)
