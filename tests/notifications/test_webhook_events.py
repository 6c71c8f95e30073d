"""Lanes and blocker types are webhook events like labels: a change of one is each of its
boards' live message, and a webhook subscribed to its type gets it."""

import json

from django_tasks_db.models import DBTaskResult

from boards import structure
from boards.blocker_types import blocker_type_create, blocker_type_delete
from notifications.webhooks import webhook_create


def delivered():
    jobs = DBTaskResult.objects.filter(task_path__endswith="webhooks.deliver")
    return sorted((json.loads(job.args_kwargs["args"][1]) for job in jobs), key=lambda body: body["at"])


def test_lane_and_blocker_type_changes_reach_a_webhook_subscribed_to_them(
    board, owner, django_capture_on_commit_callbacks
):
    workflow = board[0].workflow
    events = ["lane.updated", "lane.deleted", "blocker_type.updated", "blocker_type.deleted"]
    webhook_create(workspace=workflow.workspace, url="https://hooks.example.com/k", events=events, actor=owner)

    with django_capture_on_commit_callbacks(execute=True):
        lane = structure.lane_create(workflow=workflow, actor=owner, name="Expedite")
        structure.lane_delete(lane=lane, actor=owner)
        vendor = blocker_type_create(workspace_id=workflow.workspace_id, actor=owner, name="Vendor")
        blocker_type_delete(blocker_type=vendor, actor=owner)

    sent = [(body["event"], body["data"]) for body in delivered()]
    assert [event for event, _ in sent] == events
    assert sent[0][1]["lane"]["name"] == "Expedite"
    assert sent[1][1]["deleted_lane_ids"] == [str(lane.pk)]  # the last lane, empty: still a change
    assert sent[2][1]["blocker_type"]["name"] == "Vendor"
    assert sent[3][1]["blocker_type_id"] == str(vendor.pk)
