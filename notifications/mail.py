"""News by e-mail, batched per person: at most one e-mail every
KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS, carrying everything that waited. Each e-mail says how
to stop them: a signed link (no sign-in needed) that turns e-mail off for one kind or for
all, also given as the `List-Unsubscribe` header for mail programs' one-click unsubscribe.

The batch runs on the task queue (`send_mail_batch`), scheduled when the
first news of a batch arrives, in the same transaction, so no news is lost to a crash.
"""

import datetime
import logging
import smtplib

from django.conf import settings
from django.core import signing
from django.core.mail import EmailMessage
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django_tasks import task

from accounts.models import NOTIFY_KINDS, Notify, Profile
from notifications.models import Mail, MailBox, Notification

logger = logging.getLogger(__name__)

UNSUBSCRIBE_SALT = "kandev.notifications.unsubscribe"
ALL_KINDS = "all"
BATCH_MAX = 200  # news in one e-mail; more wait for the next


def schedule(user_ids, *, now) -> None:
    """Make sure each person has a batch on the queue (inside the caller's transaction)."""
    for user_id in sorted(user_ids):  # ascending: two writers lock mailboxes in one order
        box, _ = MailBox.objects.select_for_update().get_or_create(user_id=user_id)
        if box.due_at is not None:
            continue  # a batch is on the queue: this news joins it
        box.due_at = next_batch_at(box, now)
        box.save(update_fields=["due_at"])
        send_mail_batch.using(run_after=box.due_at).enqueue(user_id)


def next_batch_at(box: MailBox, now) -> datetime.datetime:
    if box.last_sent_at is None:
        return now
    return max(now, box.last_sent_at + datetime.timedelta(seconds=settings.KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS))


def unsubscribe_token(user_id, kind: str) -> str:
    return signing.dumps({"u": user_id, "k": kind}, salt=UNSUBSCRIBE_SALT, compress=True)


def unsubscribe_target(token: str) -> tuple[int, str] | None:
    """(user id, kind or ALL_KINDS) of a link this server signed, or None."""
    try:
        data = signing.loads(token, salt=UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return None
    kind = data.get("k") if isinstance(data, dict) else None
    if not isinstance(data.get("u"), int) or (kind not in NOTIFY_KINDS and kind != ALL_KINDS):
        return None
    return data["u"], kind


def unsubscribe(user_id: int, kind: str) -> None:
    """No more e-mail of `kind` (or of any kind): "both" keeps the inbox, "email" becomes "off"."""
    with transaction.atomic():
        profile, _ = Profile.objects.select_for_update().get_or_create(user_id=user_id)
        choices = profile.notify_choices()
        for name in NOTIFY_KINDS if kind == ALL_KINDS else [kind]:
            if choices[name] == Notify.BOTH:
                profile.notify[name] = Notify.INBOX
            elif choices[name] == Notify.EMAIL:
                profile.notify[name] = Notify.OFF
        profile.save(update_fields=["notify"])


def link(path: str) -> str:
    return settings.KANDEV_SITE_URL.rstrip("/") + path


def batch_message(user, notifications: list) -> EmailMessage:
    kinds = sorted({n.kind for n in notifications})
    only = kinds[0] if len(kinds) == 1 else ALL_KINDS
    stop_all = link(reverse("unsubscribe", kwargs={"token": unsubscribe_token(user.pk, ALL_KINDS)}))
    lines = [f"Hello {user.get_username()},", "", "News from kandev since the last e-mail:", ""]
    for item in notifications:
        lines.append(f"- {describe(item)}")
        lines.append(f"  {link(reverse('task-detail', args=[item.workflow_id, item.task_id]))}")
    lines += ["", "Choose what you hear of on your profile:", link(reverse("profile")), ""]
    if only != ALL_KINDS:
        stop_kind = link(reverse("unsubscribe", kwargs={"token": unsubscribe_token(user.pk, only)}))
        lines.append(f"Stop e-mails like this one ({NOTIFY_KINDS[only].lower()}): {stop_kind}")
    lines.append(f"Stop all e-mails from kandev: {stop_all}")
    count = len(notifications)
    subject = f"kandev: {describe(notifications[0])}" if count == 1 else f"kandev: {count} updates"
    return EmailMessage(
        subject=subject[:150],
        body="\n".join(lines),
        to=[user.email],
        headers={"List-Unsubscribe": f"<{stop_all}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"},
    )


def describe(item: Notification) -> str:
    """One line for one piece of news."""
    who = item.actor.get_username() if item.actor is not None else "kandev"
    title = item.detail.get("title", "a task")
    step = item.detail.get("step")
    return {
        "assigned": f"{who} assigned “{title}” to you",
        "mentioned": f"{who} mentioned you on “{title}”",
        "commented": f"{who} commented on “{title}”",
        "pulled": f"“{title}” was pulled into {step}" if step else f"“{title}” was pulled",
        "blocked": f"{who} blocked “{title}”: {item.detail.get('reason', '')}".rstrip(": "),
        "unblocked": f"{who} unblocked “{title}”",
        "forced": f"{who} forced “{title}” past a limit" + (f" into {step}" if step else ""),
        "due": f"“{title}” is past its due date",
        "past_sle": f"“{title}” is past its service level expectation",
    }.get(item.kind, f"{item.kind}: “{title}”")


@task()
def send_mail_batch(user_id) -> int:
    """Send the person's waiting news in one e-mail; how many it carried. A mail server that
    fails leaves the news waiting and the batch is tried again an interval later."""
    now = timezone.now()
    try:
        with transaction.atomic():
            box = MailBox.objects.select_for_update().select_related("user").filter(user_id=user_id).first()
            if box is None:
                return 0
            waiting = list(
                Notification.objects.filter(recipient_id=user_id, mail=Mail.PENDING)
                .select_related("actor")
                .order_by("at", "id")[:BATCH_MAX]
            )
            box.due_at = None
            if waiting and box.user.email and box.user.is_active:
                batch_message(box.user, waiting).send()
                box.last_sent_at = now
            Notification.objects.filter(pk__in=[n.pk for n in waiting]).update(mail=Mail.SENT)
            box.save(update_fields=["due_at", "last_sent_at"])
            if Notification.objects.filter(recipient_id=user_id, mail=Mail.PENDING).exists():
                schedule([user_id], now=now)  # more than one e-mail holds: the rest next time
            return len(waiting)
    except (OSError, smtplib.SMTPException):
        logger.warning("e-mail to user %s failed; trying again later", user_id, exc_info=True)
        retry_at = now + datetime.timedelta(seconds=settings.KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS)
        send_mail_batch.using(run_after=retry_at).enqueue(user_id)
        return 0
