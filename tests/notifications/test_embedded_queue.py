"""The embedded default runs the task queue in the server process: a webhook delivery queued
by a board change is sent by the server's own worker thread, once, though two server
processes each run one (tasks are claimed with SKIP LOCKED)."""

import pytest
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from boards.admission import task_create
from integrations.intake import signature_for
from notifications.webhooks import webhook_create
from tests.notifications.test_delivery import Receiver
from tests.servers import Server, eventually, serving_test_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EMBEDDED = {"KANDEV_BACKGROUND": "embedded", "REDIS_URL": "", "KANDEV_OUTBOUND_ALLOW": "127.0.0.1"}


def test_the_embedded_server_delivers_queued_webhooks(board, owner, settings):
    settings.KANDEV_OUTBOUND_ALLOW = ["127.0.0.1"]
    receiver = Receiver([200])
    try:
        with Server(serving_test_database(**EMBEDDED), workers=2):
            webhook, secret = webhook_create(
                workspace=board[0].workflow.workspace, url=receiver.url, events=["task.created"], actor=owner
            )
            task_create(workflow=board[0].workflow, step=board[0], actor=owner, title="Queued")
            eventually(lambda: DBTaskResult.objects.filter(status=TaskResultStatus.SUCCESSFUL).exists())
        ((headers, body),) = receiver.requests
        assert headers["X-Kandev-Signature-256"] == signature_for(secret, body)
    finally:
        receiver.close()
