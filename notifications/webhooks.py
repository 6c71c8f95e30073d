"""Outbound webhooks: an owner subscribes a URL to a workspace's event types.

Each delivery POSTs the event as JSON, signed as the intake checks signatures
(`X-Kandev-Signature-256: sha256=<HMAC-SHA256 of the body with the webhook's secret>`), with
`X-Kandev-Event` and `X-Kandev-Delivery` (one id for every attempt of one event). It runs on
the task queue (`deliver`), enqueued in the same transaction that decides it, and goes only
where the outbound rules allow (common.outbound: https on public addresses unless
KANDEV_OUTBOUND_ALLOW names more). A failed attempt (no answer, or not a 2xx) is tried again
after KANDEV_WEBHOOK_BACKOFF_SECONDS, doubling each time, up to KANDEV_WEBHOOK_MAX_ATTEMPTS
in all; a refused destination is not retried. `last_delivery` says how the last try went.

A webhook acts for its creator's ownership, as integrations.credentials rules for every
credential: the change that ends it disables the webhook in its own transaction, and each
delivery re-checks it for roles changed behind the services.
"""

import datetime
import functools
import secrets
import uuid

import httpx
import orjson
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from django_tasks import task

from common import sql
from common.outbound import GuardedTransport, OutboundRefused
from integrations import credentials
from integrations.intake import signature_for
from notifications.models import Webhook
from workflows.access import require_role

SIGNATURE_HEADER = "X-Kandev-Signature-256"
# What a webhook may subscribe to: the board's live message types (comments, labels, lanes
# and blocker types among them), and a task's due date passing.
EVENT_TYPES = (
    "task.created",
    "task.updated",
    "task.moved",
    "task.pulled",
    "task.archived",
    "task.restored",
    "task.deleted",
    "step.updated",
    "step.deleted",
    "group.updated",
    "group.deleted",
    "session.updated",
    "workflow.updated",
    "label.updated",
    "label.deleted",
    "lane.updated",
    "lane.deleted",
    "blocker_type.updated",
    "blocker_type.deleted",
    "comment.created",
    "comment.updated",
    "comment.deleted",
    "task.due",
)
RESPONSE_ERROR_MAX = 300  # characters of an error kept in last_delivery


def events_errors(events) -> list[str]:
    if not isinstance(events, list) or not events:
        return ["Choose at least one event type."]
    unknown = sorted({str(e) for e in events} - set(EVENT_TYPES))
    if unknown:
        return [f"Unknown event types: {', '.join(unknown[:5])}."]
    return []


def webhook_create(*, workspace, url: str, events: list, actor) -> tuple[Webhook, str]:
    """A new subscription and its secret (shown to the owner once)."""
    require_role(actor, workspace.pk, owner=True)
    secret = secrets.token_urlsafe(32)
    webhook = Webhook(workspace=workspace, url=url, events=sorted(set(events)), created_by=actor)
    webhook.set_secret(secret)
    webhook.save()
    return webhook, secret


def webhook_update(*, webhook: Webhook, actor, url: str | None = None, events: list | None = None) -> Webhook:
    """An owner changes where it goes or what it carries. A new URL makes it theirs: the
    secret goes only where its creator pointed it."""
    require_role(actor, webhook.workspace_id, owner=True)
    changed = []
    if url is not None and url != webhook.url:
        webhook.url, webhook.created_by = url, actor
        changed += ["url", "created_by"]
    if events is not None:
        webhook.events = sorted(set(events))
        changed.append("events")
    if webhook.disabled_at is not None and changed:  # an owner's change takes it over
        changed += credentials.taken_over(webhook, actor=actor)
    if changed:
        webhook.save(update_fields=sorted(set(changed)))
    return webhook


def webhook_delete(*, webhook: Webhook, actor) -> None:
    require_role(actor, webhook.workspace_id, owner=True)
    webhook.delete()


def publish(*, workspace_id, event: str, data: dict, writes=()) -> int:
    """Enqueue one delivery of `event` per enabled webhook of the workspace subscribed to it
    (inside the caller's transaction, when there is one); how many. `writes`
    (`common.sql.fetch_together()` writes) go ahead of the webhooks' read, with it."""
    webhooks = [webhook.pk for webhook in _enabled(workspace_id, writes) if event in webhook.events]
    if not webhooks:
        return 0
    body = orjson.dumps({"event": event, "workspace_id": workspace_id, "at": timezone.now(), "data": data}).decode()
    with transaction.atomic():
        for pk in webhooks:
            deliver.enqueue(str(pk), body, str(uuid.uuid4()), 1)
    return len(webhooks)


def _enabled(workspace_id, writes=()) -> list[Webhook]:
    """The workspace's enabled webhooks: asked after every board change, so hand-written
    (the ORM's compiler was most of its cost)."""
    read = (_enabled_statement(connection.vendor), [sql.uuid_param(workspace_id)], [Webhook])
    *_, rows = sql.fetch_together(*writes, read)
    return [webhook for (webhook,) in rows]


@functools.cache
def _enabled_statement(vendor: str) -> str:
    where = f"{sql.column(Webhook, 'workspace')} = %s AND {sql.column(Webhook, 'disabled_at')} IS NULL"
    return f"SELECT {sql.columns(Webhook)} FROM {sql.table(Webhook)} WHERE {where}"


def backoff(attempt: int) -> datetime.timedelta:
    """The wait after failed attempt number `attempt` (1, 2, ...): doubling each time."""
    return datetime.timedelta(seconds=settings.KANDEV_WEBHOOK_BACKOFF_SECONDS * 2 ** (attempt - 1))


@task()
def deliver(webhook_id: str, body: str, delivery_id: str, attempt: int) -> str:
    """One attempt to deliver one event; the next attempt is enqueued with the outcome."""
    webhook = Webhook.objects.select_related("created_by").filter(pk=webhook_id).first()
    if webhook is None or credentials.lapsed(webhook):
        return "skipped"
    event = orjson.loads(body)["event"]
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "kandev-webhooks",
        SIGNATURE_HEADER: signature_for(webhook.secret(), body.encode()),
        "X-Kandev-Event": event,
        "X-Kandev-Delivery": delivery_id,
    }
    outcome = {"event": event, "delivery_id": delivery_id, "attempt": attempt, "response_code": None, "error": ""}
    try:
        with httpx.Client(
            transport=GuardedTransport(), timeout=settings.KANDEV_WEBHOOK_TIMEOUT_SECONDS, follow_redirects=False
        ) as client:
            response = client.post(webhook.url, content=body.encode(), headers=headers)
        outcome["response_code"] = response.status_code
        ok = response.is_success
        if not ok:
            outcome["error"] = f"HTTP {response.status_code}"
    except OutboundRefused as refused:
        outcome.update(status="refused", error=str(refused)[:RESPONSE_ERROR_MAX])
        return _record(webhook, outcome)
    except httpx.HTTPError as error:
        ok, outcome["error"] = False, (str(error) or type(error).__name__)[:RESPONSE_ERROR_MAX]
    if ok:
        outcome["status"] = "delivered"
        return _record(webhook, outcome)
    if attempt >= settings.KANDEV_WEBHOOK_MAX_ATTEMPTS:
        outcome["status"] = "failed"
        return _record(webhook, outcome)
    retry_at = timezone.now() + backoff(attempt)
    outcome.update(status="retrying", next_attempt_at=retry_at.isoformat())
    with transaction.atomic():  # the next attempt and this one's record, together
        deliver.using(run_after=retry_at).enqueue(webhook_id, body, delivery_id, attempt + 1)
        return _record(webhook, outcome)


def _record(webhook: Webhook, outcome: dict) -> str:
    outcome["at"] = timezone.now().isoformat()
    Webhook.objects.filter(pk=webhook.pk).update(last_delivery=outcome)
    return outcome["status"]
