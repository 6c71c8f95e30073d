"""A live message's `steps[]` entries are whole steps (product.md §4): each equals what
`GET /api/v1/steps/{id}/` returns right after the change, so API viewers never refetch."""

import json

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from boards import admission
from boards.events import board_group
from tests.factories import StepFactory
from workflows.models import OnFull


def test_each_steps_entry_is_the_step_as_the_api_returns_it(
    workflow, make_task, owner, api, django_capture_on_commit_callbacks
):
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    doing = StepFactory(
        workflow=workflow, name="Doing", position=1, wip_limit=1, pull_from_step=backlog,
        on_full=OnFull.QUEUE, color="#ff0000",
    )
    task = make_task(backlog, "t")
    layer = get_channel_layer()
    viewer = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(board_group(workflow.pk), viewer)

    changes = [
        lambda: admission.task_move(task=task, to_step=doing, actor=owner),
        lambda: api.patch(f"/api/v1/steps/{doing.pk}/", {"name": "Busy", "wip_limit": 2}, format="json"),
    ]
    for change in changes:
        with django_capture_on_commit_callbacks(execute=True):
            change()
        message = json.loads(async_to_sync(layer.receive)(viewer)["text"])
        assert message["steps"], message["type"]
        for entry in message["steps"]:
            assert entry == api.get(f"/api/v1/steps/{entry['id']}/").json()
        assert {"pull_from_step_id", "on_full", "events", "name", "color"} <= message["steps"][0].keys()
