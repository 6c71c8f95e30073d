"""A channel layer that is down never fails a committed change (broadcast after commit)."""

import pytest
from channels_redis.core import RedisChannelLayer

from boards import events
from boards.models import Task
from tests.servers import free_port
from workflows.models import Workflow


@pytest.mark.django_db(transaction=True)
def test_unreachable_channel_layer_does_not_fail_a_committed_create(api, board, monkeypatch, caplog):
    backlog, doing, done = board
    nobody_listens = f"redis://127.0.0.1:{free_port()}"
    down = RedisChannelLayer(hosts=[nobody_listens])
    monkeypatch.setattr(events, "get_channel_layer", lambda: down)

    body = {"step_id": str(doing.pk), "title": "Kept"}
    response = api.post("/api/v1/tasks/", body, format="json")

    assert response.status_code == 201
    assert Task.objects.filter(title="Kept", step=doing).exists()
    assert Workflow.objects.get(pk=backlog.workflow_id).version == 1
    assert "send_board_event" in caplog.text  # the failure was logged, not raised
