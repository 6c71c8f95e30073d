"""Deliveries on the real task queue (django-tasks' database backend and its worker): e-mail
batches (Django's outbox, and a real SMTP server on loopback), webhooks against a local
HTTP receiver that fails before it succeeds, and a worker that dies mid-task."""

import datetime
import email
import email.policy
import json
import signal
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from aiosmtpd.controller import Controller
from django.core import mail as outbox
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from accounts.models import Profile
from boards.admission import task_create
from boards.services import task_update
from integrations.intake import signature_for
from notifications.models import Mail, MailBox, Notification, Webhook
from notifications.queue import new_worker, reclaim_abandoned
from tests.factories import MembershipFactory, UserFactory
from tests.servers import ROOT, free_port, serving_test_database
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


def run_queue():
    """The queue's real worker, until no task is due."""
    new_worker(batch=True).run()


@pytest.fixture
def bob(workflow):
    user = UserFactory(username="bob", email="bob@example.test")
    MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER)
    Profile.objects.create(user=user, notify={"assigned": "both"})
    return user


@pytest.fixture
def mail_on(settings):
    settings.KANDEV_CAN_SEND_EMAIL = True
    settings.KANDEV_SITE_URL = "https://kandev.example.test"
    settings.DEFAULT_FROM_EMAIL = "kandev <noreply@kandev.test>"


def assign(board, owner, user, title):
    task = task_create(workflow=board[0].workflow, step=board[0], actor=owner, title=title).task
    return task_update(task=task, actor=owner, assignee_id=user.pk)


def test_news_waits_for_one_email_per_person_and_its_link_unsubscribes(board, owner, bob, mail_on, settings, client):
    assign(board, owner, bob, "Draft the budget")
    assign(board, owner, bob, "Book the venue")
    assert DBTaskResult.objects.filter(status=TaskResultStatus.READY).count() == 1  # one batch for both
    run_queue()
    (sent,) = outbox.outbox
    assert sent.to == ["bob@example.test"] and sent.subject == "kandev: 2 updates"
    assert "olivia assigned “Draft the budget” to you" in sent.body and "“Book the venue”" in sent.body
    unsubscribe = sent.extra_headers["List-Unsubscribe"].strip("<>")
    assert unsubscribe.startswith("https://kandev.example.test/unsubscribe/")
    assert sent.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert set(Notification.objects.filter(recipient=bob).values_list("mail", flat=True)) == {Mail.SENT}

    # News within the interval waits for the next batch, an interval after the last.
    assign(board, owner, bob, "Order the badges")
    box = MailBox.objects.get(user=bob)
    interval = datetime.timedelta(seconds=settings.KANDEV_NOTIFY_EMAIL_INTERVAL_SECONDS)
    assert box.due_at == box.last_sent_at + interval
    (waiting,) = DBTaskResult.objects.filter(status=TaskResultStatus.READY)
    assert waiting.run_after == box.due_at
    run_queue()
    assert len(outbox.outbox) == 1  # not yet due

    # The link works without signing in; the inbox keeps the news ("both" becomes "inbox").
    path = unsubscribe.removeprefix("https://kandev.example.test")
    assert "Stop all e-mails from kandev?" in client.get(path).content.decode()
    assert client.post(path).status_code == 200
    assert Profile.objects.get(user=bob).notify_choices()["assigned"] == "inbox"
    assert client.get("/unsubscribe/forged-token/").status_code == 404


class Inbox:
    """aiosmtpd's handler: keeps what arrives."""

    def __init__(self):
        self.messages, self.arrived = [], threading.Event()

    async def handle_DATA(self, server, session, envelope):
        self.messages.append(envelope)
        self.arrived.set()
        return "250 OK"


@pytest.fixture
def smtp_inbox(settings):
    """A real SMTP server on loopback that mail is sent to, and what arrives there."""
    inbox = Inbox()
    smtp = Controller(inbox, hostname="127.0.0.1", port=free_port())
    smtp.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", smtp.port
    yield inbox
    smtp.stop()


def test_a_batch_goes_through_a_real_smtp_server(board, owner, bob, mail_on, smtp_inbox):
    assign(board, owner, bob, "Ship the installer")
    run_queue()
    assert smtp_inbox.arrived.wait(10)
    (envelope,) = smtp_inbox.messages
    assert envelope.rcpt_tos == ["bob@example.test"]
    message = email.message_from_bytes(envelope.content, policy=email.policy.default)
    assert message["List-Unsubscribe"].strip().startswith("<https://kandev.example.test/unsubscribe/")
    assert "Ship the installer" in message.get_content()


class Receiver:
    """A local HTTP receiver of webhooks: answers each request with the next of `answers`
    (the last repeats); `hold` makes it keep the first request unanswered until released."""

    def __init__(self, answers, hold=False):
        self.answers, self.requests, self.hold = list(answers), [], hold
        self.got, self.release = threading.Event(), threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append((dict(self.headers), body))
                receiver.got.set()
                if receiver.hold and len(receiver.requests) == 1:
                    receiver.release.wait(60)
                code = receiver.answers.pop(0) if len(receiver.answers) > 1 else receiver.answers[0]
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def outbound(settings):
    settings.KANDEV_OUTBOUND_ALLOW = ["127.0.0.1"]


def subscribe(owner, workspace, url, events=("task.created",)):
    client = APIClient()
    client.force_authenticate(owner)
    made = client.post(
        "/api/v1/webhooks/", {"workspace_id": str(workspace.pk), "url": url, "events": list(events)}, format="json"
    )
    assert made.status_code == 201, made.content
    return made.json()


def test_a_webhook_is_signed_and_retried_with_backoff_until_it_is_taken(board, owner, outbound, settings):
    settings.KANDEV_WEBHOOK_BACKOFF_SECONDS = 30
    receiver = Receiver([500, 503, 200])
    try:
        hook = subscribe(owner, board[0].workflow.workspace, receiver.url)
        task_create(workflow=board[0].workflow, step=board[0], actor=owner, title="Signed")
        waits = []
        for attempt in (1, 2, 3):
            run_queue()
            assert len(receiver.requests) == attempt
            last = Webhook.objects.get(pk=hook["id"]).last_delivery
            if attempt < 3:
                assert (last["status"], last["attempt"], last["response_code"]) == (
                    "retrying",
                    attempt,
                    500 + attempt // 2 * 3,
                )
                (next_try,) = DBTaskResult.objects.filter(status=TaskResultStatus.READY)
                finished = DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL).latest("finished_at")
                waits.append(round((next_try.run_after - finished.finished_at).total_seconds()))
                DBTaskResult.objects.filter(pk=next_try.pk).update(run_after=timezone.now())  # its time has come
        assert waits == [30, 60]  # doubling
        assert (last := Webhook.objects.get(pk=hook["id"]).last_delivery)["status"] == "delivered"
        assert (last["attempt"], last["response_code"], last["error"]) == (3, 200, "")
        for headers, body in receiver.requests:
            assert headers["X-Kandev-Signature-256"] == signature_for(hook["secret"], body)
            assert headers["X-Kandev-Event"] == "task.created"
            assert json.loads(body)["data"]["task"]["title"] == "Signed"
        assert len({headers["X-Kandev-Delivery"] for headers, _ in receiver.requests}) == 1  # one delivery
    finally:
        receiver.close()


def test_attempts_are_bounded_and_an_unallowed_destination_is_refused(board, owner, outbound, settings):
    settings.KANDEV_WEBHOOK_MAX_ATTEMPTS = 2
    receiver = Receiver([500])
    try:
        hook = subscribe(owner, board[0].workflow.workspace, receiver.url)
        task_create(workflow=board[0].workflow, step=board[0], actor=owner, title="Never taken")
        run_queue()
        DBTaskResult.objects.filter(status=TaskResultStatus.READY).update(run_after=timezone.now())
        run_queue()
        assert len(receiver.requests) == 2
        assert Webhook.objects.get(pk=hook["id"]).last_delivery["status"] == "failed"
        assert not DBTaskResult.objects.filter(status=TaskResultStatus.READY).exists()

        settings.KANDEV_OUTBOUND_ALLOW = []  # the operator takes loopback back
        task_create(workflow=board[0].workflow, step=board[0], actor=owner, title="Refused")
        run_queue()
        assert len(receiver.requests) == 2
        last = Webhook.objects.get(pk=hook["id"]).last_delivery
        assert last["status"] == "refused" and "Refused to contact 127.0.0.1" in last["error"]
    finally:
        receiver.close()


def test_a_task_whose_worker_died_runs_again(board, owner, outbound):
    receiver = Receiver([200], hold=True)
    worker = None
    try:
        hook = subscribe(owner, board[0].workflow.workspace, receiver.url)
        task_create(workflow=board[0].workflow, step=board[0], actor=owner, title="Survives")
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "db_worker", "--queue-name=*", "--no-startup-delay", "--no-reload"],
            cwd=ROOT,
            env=serving_test_database(KANDEV_OUTBOUND_ALLOW="127.0.0.1"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        assert receiver.got.wait(60)  # the worker claimed the delivery and is sending it
        worker.send_signal(signal.SIGKILL)
        worker.wait(10)
        (claimed,) = DBTaskResult.objects.all()
        assert claimed.status == TaskResultStatus.RUNNING  # left so by the dead worker

        assert reclaim_abandoned() == 0  # within the lease it may still be working
        later = timezone.now() + datetime.timedelta(seconds=3600)
        assert reclaim_abandoned(now=later) == 1
        receiver.release.set()
        run_queue()
        assert len(receiver.requests) == 2
        assert Webhook.objects.get(pk=hook["id"]).last_delivery["status"] == "delivered"
        assert DBTaskResult.objects.get(pk=claimed.pk).status == TaskResultStatus.SUCCESSFUL
    finally:
        if worker is not None and worker.poll() is None:
            worker.kill()
        receiver.close()
