"""What one account may create: workspaces it owns, open invites per workspace, live tasks
it created. Over a quota: 409 `quota_exceeded`, nothing written; 0 turns a quota off."""

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards.admission import task_create
from boards.models import Task
from common.errors import Conflict
from teams.models import Invite
from teams.services import invite_create
from tests.clients import api_for
from tests.concurrency import race
from tests.factories import MembershipFactory, UserFactory
from workflows import services
from workflows.models import Membership, Role, Workspace


@pytest.fixture(autouse=True)
def no_task_budgets():
    """The open-task quota keeps each account's uncounted creates in the shared cache."""
    cache.clear()
    yield
    cache.clear()


def assert_refused(response, quota: str, limit: int):
    assert response.status_code == 409, response.content
    body = response.json()
    assert (body["code"], body["quota"], body["limit"]) == ("quota_exceeded", quota, limit)
    assert body["detail"]


def test_an_account_owns_at_most_its_workspace_quota(api, owner, settings):
    settings.KANDEV_MAX_WORKSPACES_PER_USER = 2
    made = [api.post("/api/v1/workspaces/", {"name": f"Team {n}"}, format="json").status_code for n in range(2)]
    refused = api.post("/api/v1/workspaces/", {"name": "One too many"}, format="json")

    assert made == [201, 201]
    assert_refused(refused, "workspaces", 2)
    assert not Workspace.objects.filter(name="One too many").exists()
    assert Membership.objects.filter(user=owner, role=Role.OWNER).count() == 2
    # Someone else is not held back; handing one over frees a place.
    assert api_for(UserFactory()).post("/api/v1/workspaces/", {"name": "Theirs"}, format="json").status_code == 201
    Membership.objects.filter(user=owner, workspace__name="Team 0").update(role=Role.MEMBER)
    assert api.post("/api/v1/workspaces/", {"name": "Now it fits"}, format="json").status_code == 201


def test_zero_turns_a_quota_off(api, settings):
    settings.KANDEV_MAX_WORKSPACES_PER_USER = 0
    made = [api.post("/api/v1/workspaces/", {"name": f"T{n}"}, format="json") for n in range(3)]
    assert [r.status_code for r in made] == [201] * 3


@pytest.mark.django_db(transaction=True)
def test_concurrent_workspace_creates_never_pass_the_quota(settings):
    settings.KANDEV_MAX_WORKSPACES_PER_USER = 3
    founder = UserFactory(username="founder")

    outcomes = race(8, lambda i: services.workspace_create(name=f"Team {i}", owner=founder))

    refused = [o for o in outcomes if isinstance(o, Conflict)]
    assert len(refused) == 5 and {o.code for o in refused} == {"quota_exceeded"}
    assert Membership.objects.filter(user=founder, role=Role.OWNER).count() == 3
    assert Workspace.objects.count() == 3  # the refused left nothing behind


def invites_url(workspace) -> str:
    return f"/api/v1/workspaces/{workspace.pk}/invites/"


def test_a_workspace_has_at_most_its_quota_of_open_invites(api, workflow, settings):
    settings.KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE = 2
    workspace = workflow.workspace
    made = [api.post(invites_url(workspace), {"role": "member"}, format="json") for _ in range(2)]
    refused = api.post(invites_url(workspace), {"role": "member"}, format="json")

    assert [r.status_code for r in made] == [201, 201]
    assert_refused(refused, "open_invites", 2)
    assert Invite.objects.filter(workspace=workspace).count() == 2
    # A revoked link frees its place.
    assert api.delete(f"{invites_url(workspace)}{made[0].json()['id']}/").status_code == 204
    assert api.post(invites_url(workspace), {"role": "member"}, format="json").status_code == 201


def test_the_members_page_says_when_the_invite_quota_is_reached(workflow, owner, settings, client, pages):
    settings.KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE = 1
    client.force_login(owner)
    url = f"/workspaces/{workflow.workspace.pk}/members/"
    first = client.post(url, {"action": "invite", "role": "member", "expires_in_days": 7})
    second = client.post(url, {"action": "invite", "role": "member", "expires_in_days": 7}, follow=True)
    assert first.status_code == 200
    assert second.status_code == 200 and "open invite links" in second.text
    assert Invite.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_invites_never_pass_the_quota(workflow, owner, settings):
    settings.KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE = 2
    outcomes = race(6, lambda i: invite_create(workspace=workflow.workspace, role=Role.MEMBER, actor=owner))

    assert sum(isinstance(o, Conflict) and o.code == "quota_exceeded" for o in outcomes) == 4
    assert Invite.objects.count() == 2


def test_an_account_has_at_most_its_quota_of_live_tasks_it_created(api, board, owner, settings):
    settings.KANDEV_MAX_OPEN_TASKS_PER_USER = 2
    backlog, _, _ = board
    workflow_id = str(backlog.workflow_id)
    made = [api.post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": f"t{n}"}, format="json") for n in range(2)]
    refused = api.post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": "one too many"}, format="json")

    assert [r.status_code for r in made] == [201, 201]
    assert_refused(refused, "open_tasks", 2)
    assert not Task.objects.filter(title="one too many").exists()
    assert backlog.workflow.__class__.objects.get(pk=backlog.workflow_id).version == 2  # nothing recorded
    # Every door ends in task_create; a forced create by an owner is refused too.
    with pytest.raises(Conflict) as forced:
        task_create(workflow=backlog.workflow, actor=owner, title="forced", force=True, reason="incident")
    assert forced.value.code == "quota_exceeded"
    # Another member's tasks on the same board are theirs; an archived task frees a place.
    colleague = UserFactory(username="carl")
    MembershipFactory(workspace=backlog.workflow.workspace, user=colleague, role=Role.MEMBER)
    theirs = api_for(colleague).post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": "c"}, format="json")
    assert theirs.status_code == 201
    assert api.post(f"/api/v1/tasks/{made[0].json()['id']}/archive/").status_code == 200
    assert api.post("/api/v1/tasks/", {"workflow_id": workflow_id, "title": "fits"}, format="json").status_code == 201


def test_tasks_created_by_no_account_count_for_nobody(board, settings):
    settings.KANDEV_MAX_OPEN_TASKS_PER_USER = 1
    backlog, _, _ = board
    for n in range(3):  # a webhook intake's or a review watch's creates have no actor
        task_create(workflow=backlog.workflow, actor=None, title=f"from a hook {n}")
    assert Task.objects.count() == 3


def test_the_task_count_runs_only_when_the_room_left_may_have_run_out(board, owner, settings):
    """A count that leaves room for 9 more lets the next 4 creates pass uncounted, and so on,
    halving: the quota costs a dozen counts to fill, not one per create."""
    settings.KANDEV_MAX_OPEN_TASKS_PER_USER = 10
    backlog, _, _ = board
    counted = []
    for n in range(12):
        with CaptureQueriesContext(connection) as queries:
            try:
                task_create(workflow=backlog.workflow, actor=owner, title=f"t{n}")
            except Conflict as refused:
                assert refused.code == "quota_exceeded"
        counted.append(any("COUNT(" in q["sql"] and "boards_taskevent" in q["sql"] for q in queries))
    # counts at 0 (room for 4 uncounted), 5 (room 2), 8 (0), 9 (0), then at the limit
    assert [n for n, c in enumerate(counted) if c] == [0, 5, 8, 9, 10, 11]
    assert Task.objects.count() == 10
