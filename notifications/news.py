"""News becomes notifications: each person's choice for its kind (their profile's `notify`)
says whether it goes to their inbox, their e-mail, both or nowhere. Inbox news moves their
bell at once (after commit); e-mail news joins their next e-mail batch (notifications.mail)."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import NOTIFY_DEFAULT, Notify, Profile
from boards.events import inbox_changed_on_commit
from boards.models import Task
from notifications import mail
from notifications.models import Mail, Notification

TO_INBOX = frozenset({Notify.INBOX, Notify.BOTH})
BY_EMAIL = frozenset({Notify.EMAIL, Notify.BOTH})


def choices_of(user_ids) -> dict:
    """user id -> {kind: choice} as they set it (kinds missing take NOTIFY_DEFAULT)."""
    return dict(Profile.objects.filter(user_id__in=user_ids).values_list("user_id", "notify"))


def deliver(news: list, *, workflow_id) -> list[Notification]:
    """Write the notifications `news` makes, in one transaction with their e-mail batches."""
    if not news:
        return []
    recipients = {n.recipient_id for n in news}
    choices = choices_of(recipients)
    emails = dict(get_user_model().objects.filter(pk__in=recipients, is_active=True).values_list("pk", "email"))
    can_mail = settings.KANDEV_CAN_SEND_EMAIL
    tasks = set(Task.objects.filter(pk__in={n.task_id for n in news}).values_list("pk", flat=True))
    now, rows = timezone.now(), []
    for item in news:
        if item.recipient_id not in emails or item.task_id not in tasks:
            continue
        choice = choices.get(item.recipient_id, {}).get(item.kind, NOTIFY_DEFAULT)
        in_inbox = choice in TO_INBOX
        by_mail = can_mail and choice in BY_EMAIL and bool(emails[item.recipient_id])
        if not (in_inbox or by_mail):
            continue
        rows.append(
            Notification(
                recipient_id=item.recipient_id,
                kind=item.kind,
                workflow_id=workflow_id,
                task_id=item.task_id,
                actor_id=item.actor_id,
                at=now,
                detail=item.detail,
                in_inbox=in_inbox,
                mail=Mail.PENDING if by_mail else Mail.NONE,
            )
        )
    if not rows:
        return []
    with transaction.atomic():
        rows = _insert_beside_tasks(rows)
        if not rows:
            return []
        mail.schedule({row.recipient_id for row in rows if row.mail == Mail.PENDING}, now=now)
        inbox_changed_on_commit(row.recipient_id for row in rows if row.in_inbox)
    return rows


def _insert_beside_tasks(rows: list[Notification]) -> list[Notification]:
    """Insert `rows` unless their task is gone: a change committed meanwhile may have
    deleted it. On PostgreSQL the foreign keys are checked at the insert (not at commit),
    which also keeps the task from going until this transaction ends; a row whose task went
    is dropped, the rest are written."""
    with transaction.atomic():
        if connection.vendor == "postgresql":  # SQLite's writes are serialized whole
            with connection.cursor() as cursor:
                cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        for _ in range(3):
            try:
                with transaction.atomic():
                    return Notification.objects.bulk_create(rows)
            except IntegrityError:
                live = set(Task.objects.filter(pk__in={r.task_id for r in rows}).values_list("pk", flat=True))
                rows = [row for row in rows if row.task_id in live]
        return []


def unread_count(user) -> int:
    return Notification.objects.filter(recipient=user, in_inbox=True, read_at__isnull=True).count()


def mark_read(user, *, ids=None) -> int:
    """Mark the person's notifications read (those of `ids`, or all); how many changed."""
    unread = Notification.objects.filter(recipient=user, in_inbox=True, read_at__isnull=True)
    if ids is not None:
        unread = unread.filter(pk__in=ids)
    with transaction.atomic():
        changed = unread.update(read_at=timezone.now())
        if changed:
            inbox_changed_on_commit([user.pk])
    return changed
