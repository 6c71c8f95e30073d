"""The webhooks API: owners subscribe, the secret is shown once, bad input is a 400 that
persists nothing, and a webhook stops when its creator stops being an owner."""

import pytest
from rest_framework.test import APIClient

from integrations.models import DisabledReason
from notifications.models import Webhook
from notifications.webhooks import deliver
from teams.services import member_remove, member_update
from tests.conftest import member_client
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Membership, Role

URL = "https://hooks.example.com/kandev"


def test_owners_manage_webhooks_and_see_the_secret_once(api, workflow):
    workspace = workflow.workspace
    made = api.post(
        "/api/v1/webhooks/", {"workspace_id": str(workspace.pk), "url": URL, "events": ["task.moved"]}, format="json"
    )
    assert made.status_code == 201
    body = made.json()
    assert len(body["secret"]) > 30 and body["last_delivery"] is None and body["created_by"] == "olivia"
    listed = api.get(f"/api/v1/webhooks/?workspace={workspace.pk}").json()["results"]
    assert [h["id"] for h in listed] == [body["id"]] and "secret" not in listed[0]
    changed = api.patch(
        f"/api/v1/webhooks/{body['id']}/", {"events": ["task.pulled", "comment.created"]}, format="json"
    )
    assert changed.status_code == 200 and changed.json()["events"] == ["comment.created", "task.pulled"]
    assert api.delete(f"/api/v1/webhooks/{body['id']}/").status_code == 204
    assert not Webhook.objects.exists()


def test_bad_input_is_refused_and_nothing_persists(api, workflow, settings):
    settings.KANDEV_OUTBOUND_ALLOW = []
    workspace_id = str(workflow.workspace.pk)
    for body, field in [
        ({"workspace_id": workspace_id, "url": "http://hooks.example.com/", "events": ["task.moved"]}, "url"),
        ({"workspace_id": workspace_id, "url": "https://10.0.0.1/", "events": ["task.moved"]}, "url"),
        ({"workspace_id": workspace_id, "url": URL, "events": ["task.exploded"]}, "events"),
        ({"workspace_id": workspace_id, "url": URL, "events": []}, "events"),
        ({"workspace_id": "not-a-uuid", "url": URL, "events": ["task.moved"]}, "workspace_id"),
    ]:
        refused = api.post("/api/v1/webhooks/", body, format="json")
        assert refused.status_code == 400 and field in refused.json()["errors"], body
    assert not Webhook.objects.exists()


def test_members_may_not_and_strangers_see_nothing(workflow, api):
    workspace = workflow.workspace
    body = {"workspace_id": str(workspace.pk), "url": URL, "events": ["task.moved"]}
    assert member_client(workspace, Role.MEMBER).post("/api/v1/webhooks/", body, format="json").status_code == 403
    hook = api.post("/api/v1/webhooks/", body, format="json").json()
    member = member_client(workspace, Role.MEMBER)
    assert member.get("/api/v1/webhooks/").json()["results"] == []
    assert (
        member.patch(f"/api/v1/webhooks/{hook['id']}/", {"events": ["task.pulled"]}, format="json").status_code == 403
    )
    stranger = APIClient()
    stranger.force_authenticate(UserFactory())
    assert stranger.delete(f"/api/v1/webhooks/{hook['id']}/").status_code == 404
    assert stranger.post("/api/v1/webhooks/", body, format="json").status_code == 400
    assert Webhook.objects.get().events == ["task.moved"]


@pytest.fixture
def others_hook(workflow):
    """A webhook made by a second owner, Mike, through the API."""
    mike = UserFactory(username="mike")
    MembershipFactory(workspace=workflow.workspace, user=mike, role=Role.OWNER)
    client = APIClient()
    client.force_authenticate(mike)
    body = {"workspace_id": str(workflow.workspace_id), "url": URL, "events": ["task.moved"]}
    return mike, Webhook.objects.get(pk=client.post("/api/v1/webhooks/", body, format="json").json()["id"])


@pytest.mark.parametrize("role", [Role.MEMBER, Role.VIEWER])
def test_a_webhook_stops_when_its_creator_is_no_longer_an_owner(workflow, owner, others_hook, role):
    mike, webhook = others_hook
    member_update(workspace=workflow.workspace, user_id=mike.pk, role=role, actor=owner)
    webhook.refresh_from_db()
    assert webhook.disabled_at is not None and webhook.disabled_reason == DisabledReason.CREATOR_NOT_OWNER


def test_a_removed_or_deactivated_creators_webhook_says_which(workflow, owner, others_hook):
    mike, webhook = others_hook
    member_remove(workspace=workflow.workspace, user_id=mike.pk, actor=owner)
    webhook.refresh_from_db()
    assert webhook.disabled_reason == DisabledReason.CREATOR_REMOVED
    other = UserFactory()
    MembershipFactory(workspace=workflow.workspace, user=other, role=Role.OWNER)
    hook = Webhook.objects.create(workspace=workflow.workspace, url=URL, events=["task.moved"], created_by=other)
    other.is_active = False
    other.save()
    hook.refresh_from_db()
    assert hook.disabled_reason == DisabledReason.CREATOR_DEACTIVATED


def test_a_role_changed_behind_the_services_stops_the_webhook_at_its_next_delivery(workflow, owner, others_hook):
    mike, webhook = others_hook
    Membership.objects.filter(workspace=workflow.workspace, user=mike).update(role=Role.MEMBER)  # the admin's inline
    assert deliver.call(str(webhook.pk), '{"event": "task.moved"}', "d-1", 1) == "skipped"
    webhook.refresh_from_db()
    assert webhook.disabled_reason == DisabledReason.CREATOR_NOT_OWNER and webhook.last_delivery is None


def test_an_owners_change_takes_a_stopped_webhook_over(workflow, owner, api, others_hook):
    mike, webhook = others_hook
    member_update(workspace=workflow.workspace, user_id=mike.pk, role=Role.MEMBER, actor=owner)
    taken = api.patch(f"/api/v1/webhooks/{webhook.pk}/", {"events": ["task.pulled"]}, format="json").json()
    assert taken["created_by"] == "olivia" and taken["disabled_at"] is None and taken["disabled_reason"] == ""
    member_update(workspace=workflow.workspace, user_id=mike.pk, role=Role.OWNER, actor=owner)
    member_update(workspace=workflow.workspace, user_id=mike.pk, role=Role.VIEWER, actor=owner)
    webhook.refresh_from_db()
    assert webhook.disabled_at is None  # it acts for its new creator now


def test_the_webhooks_page_is_for_owners(workflow, owner, client):
    path = f"/workspaces/{workflow.workspace_id}/webhooks/"
    member = UserFactory()
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    client.force_login(member)
    assert client.get(path).status_code == 403
    client.force_login(UserFactory())
    assert client.get(path).status_code == 404
    client.force_login(owner)
    refused = client.post(path, {"url": "http://hooks.example.com/", "events": ["task.moved"]})
    assert refused.status_code == 400 and not Webhook.objects.exists()
    made = client.post(path, {"url": URL, "events": ["task.moved", "task.exploded"]})
    webhook = Webhook.objects.get()
    assert made.status_code == 200 and webhook.secret() in made.content.decode()
    assert webhook.events == ["task.moved"]
    assert webhook.secret() not in client.get(path).content.decode()
