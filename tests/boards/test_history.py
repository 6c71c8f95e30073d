"""The history and the live messages name the board version of their change."""

import json

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from boards import admission
from boards.events import board_group
from boards.models import TaskEvent
from workflows.models import Workflow


def test_every_event_names_the_board_version_of_its_change(board, make_task, owner):
    backlog, doing, done = board
    a = make_task(doing, "a")
    make_task(doing, "b")
    make_task(backlog, "waiting")  # In Progress is full: it waits
    admission.task_move(task=a, to_step=done, actor=owner)  # the move and its pull: one change
    versions = list(TaskEvent.objects.order_by("id").values_list("kind", "detail__version"))
    assert versions == [("created", 1), ("created", 2), ("created", 3), ("moved", 4), ("pulled", 4)]


def test_the_live_message_carries_the_version_the_change_committed(
    board, make_task, owner, django_capture_on_commit_callbacks
):
    backlog, doing, done = board
    a = make_task(doing, "a")
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(board_group(doing.workflow_id), channel)
    with django_capture_on_commit_callbacks(execute=True):
        admission.task_move(task=a, to_step=done, actor=owner)
    message = json.loads(async_to_sync(layer.receive)(channel)["text"])
    assert message["version"] == Workflow.objects.get(pk=doing.workflow_id).version == 2


def test_deleting_a_step_with_live_tasks_records_their_moves(api, board, make_task):
    backlog, doing, done = board
    task = make_task(done, "finished")
    response = api.delete(f"/api/v1/steps/{done.pk}/?move_tasks_to={backlog.pk}")
    assert response.status_code == 204
    event = TaskEvent.objects.get(task_id=task.pk, detail__action="bulk_move")
    assert (event.from_step_id, event.to_step_id) == (done.pk, backlog.pk)


def test_deleting_a_step_that_holds_tasks_is_announced_as_a_step_deletion(
    api, board, make_task, django_capture_on_commit_callbacks
):
    backlog, doing, done = board
    make_task(done, "finished")
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(board_group(done.workflow_id), channel)
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/v1/steps/{done.pk}/?move_tasks_to={backlog.pk}").status_code == 204
    message = json.loads(async_to_sync(layer.receive)(channel)["text"])
    assert (message["type"], message["step_id"]) == ("step.deleted", str(done.pk))
    # moved to Backlog, and In Progress, which has room, pulled it in the same change
    assert [t["step_id"] for t in message["tasks"]] == [str(doing.pk)]
