"""Live messages carry the counts the change kept in memory and the version it committed:
both must equal the database."""

import json

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from boards import admission
from boards.events import board_group
from boards.selectors import step_counts
from tests.factories import StepFactory
from workflows.models import OnFull, Workflow


def test_every_message_counts_equal_the_database(workflow, make_task, owner, django_capture_on_commit_callbacks):
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    doing = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2, pull_from_step=backlog)
    review = StepFactory(workflow=workflow, name="Review", position=2, wip_limit=1, on_full=OnFull.QUEUE)
    done = StepFactory(workflow=workflow, name="Done", position=3)
    tasks = [make_task(backlog, f"t{i}") for i in range(6)]
    ephemeral = make_task(backlog, "scratch", is_ephemeral=True)

    operations = [
        lambda: admission.task_move(task=tasks[0], to_step=doing, actor=owner),
        lambda: admission.task_move(task=tasks[1], to_step=review, actor=owner),
        lambda: admission.task_move(task=tasks[2], to_step=review, actor=owner),  # queued
        lambda: admission.task_move(task=tasks[1], to_step=done, actor=owner),  # promotes the queue
        lambda: admission.task_bulk_move(task_ids=[tasks[0].pk, tasks[3].pk], to_step=done, actor=owner),
        lambda: admission.task_archive(task=tasks[4], actor=owner),
        lambda: admission.task_restore(task=tasks[4], actor=owner),
        lambda: admission.task_make_permanent(task=ephemeral, actor=owner),
        lambda: admission.task_delete(task=tasks[5], actor=owner),
        lambda: admission.task_create(
            workflow=workflow, actor=owner, step=doing, title="new", force=True, reason="hotfix"
        ),
    ]
    steps = (backlog, doing, review, done)
    layer = get_channel_layer()
    viewer = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(board_group(workflow.pk), viewer)
    expected = []
    for operation in operations:
        with django_capture_on_commit_callbacks(execute=True):
            operation()
        expected.append((Workflow.objects.get(pk=workflow.pk).version, step_counts([s.pk for s in steps])))

    async def messages():  # one event loop for all (channels_redis buffers per loop)
        return [json.loads((await layer.receive(viewer))["text"]) for _ in operations]

    for message, (version, actual) in zip(async_to_sync(messages)(), expected, strict=True):
        assert message["version"] == version
        assert message["steps"], message["type"]
        for step in message["steps"]:
            pk = next(s.pk for s in steps if str(s.pk) == step["id"])
            assert (step["occupied"], step["queued"]) == actual[pk], (message["type"], step)
