import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from boards.models import Task
from integrations import crypto
from integrations.models import ActsForCreator
from workflows.models import Workflow, Workspace


class Watch(models.Model):
    """A person's choice about a task's news. Made on their first involvement (assigned,
    author, commenter) or by their own watch/unwatch; an explicit unwatch (`watching` False)
    stays, so later involvement does not undo it."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    watching = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "user"], name="one_watch_per_person_and_task")]

    def __str__(self):
        return f"{self.user_id} {'watches' if self.watching else 'ignores'} {self.task_id}"


class Mail(models.TextChoices):
    NONE = "", "Not by e-mail"
    PENDING = "pending", "Waits for the next e-mail"
    SENT = "sent", "Sent"


class Notification(models.Model):
    """One piece of news for one person. `in_inbox` when they hear of its kind in kandev;
    `mail` tracks it through their e-mail batch."""

    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12)
    workflow = models.ForeignKey(Workflow, on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    at = models.DateTimeField(default=timezone.now)
    # What the news says beyond its kind (the task's title, a block's reason, the step), kept
    # as it was then: the inbox and the e-mail read it without joining the board.
    detail = models.JSONField(default=dict, blank=True)
    in_inbox = models.BooleanField(default=True)
    read_at = models.DateTimeField(null=True, blank=True)
    mail = models.CharField(max_length=7, choices=Mail.choices, default=Mail.NONE, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [
            models.Index(fields=["recipient", "-at", "-id"], condition=Q(in_inbox=True), name="inbox_newest_first"),
            models.Index(fields=["recipient"], condition=Q(in_inbox=True, read_at__isnull=True), name="inbox_unread"),
            models.Index(fields=["recipient"], condition=Q(mail=Mail.PENDING), name="mail_pending"),
        ]

    def __str__(self):
        return f"{self.kind} for {self.recipient_id}"


class MailBox(models.Model):
    """A person's e-mail rhythm: at most one e-mail every KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS.
    `due_at` is set while a batch is scheduled (one task on the queue), so news arriving
    meanwhile joins it instead of scheduling another."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="+")
    last_sent_at = models.DateTimeField(null=True, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"mail of {self.user_id}"


class Webhook(ActsForCreator):
    """An owner's subscription: the workspace's events of the chosen types, POSTed to `url`,
    signed with the secret (shown once, stored encrypted: the HMAC needs it). It acts for its
    creator's ownership and stops with it (integrations.credentials)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=2000)
    events = models.JSONField(default=list)
    secret_encrypted = models.TextField(editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    # {"status", "attempt", "response_code", "at", "error", "event", "next_attempt_at"}: the last try's outcome
    last_delivery = models.JSONField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return self.url

    def set_secret(self, plain: str) -> None:
        self.secret_encrypted = crypto.encrypt(plain)

    def secret(self) -> str:
        return crypto.decrypt(self.secret_encrypted)


class DuePassed(models.Model):
    """A task's due date that the due pass has told of: each due date once, however many
    background passes (in however many processes) see it passed."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    due_at = models.DateTimeField()
    told_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task", "due_at"], name="one_due_news_per_due_date")]

    def __str__(self):
        return f"{self.task_id} due {self.due_at:%Y-%m-%d %H:%M}"


class SlePassed(models.Model):
    """A task whose age passed its service level, told of by the service-level pass
    (flow/past_sle.py): once per task (its cycle's start, `Task.started_at`, is never reset),
    however many background passes (in however many processes) see it."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="+")
    days = models.PositiveIntegerField()  # the service level it passed
    told_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["task"], name="one_sle_news_per_task")]

    def __str__(self):
        return f"{self.task_id} past {self.days} days"
