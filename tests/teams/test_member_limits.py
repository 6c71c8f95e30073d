"""Personal WIP limits on memberships: the members API shows each
person's limit and what it counts; raising a limit fills the boards where their work
waits; removing a member, or making them a viewer, unassigns their tasks on every board."""

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from boards import admission
from boards.models import EventKind, Task, TaskEvent
from teams import invitations
from tests.agents.test_metrics import scrape, value
from tests.clients import api_for
from tests.factories import MembershipFactory, UserFactory, board
from workflows.models import Membership, Role, Workflow

pytestmark = pytest.mark.django_db


def members_url(workspace, user=None):
    base = f"/api/v1/workspaces/{workspace.pk}/members/"
    return base if user is None else f"{base}{user.pk}/"


def kanban(workspace, name):
    """Backlog -> In Progress (limit 5, pulls from Backlog) -> Done."""
    return board(workspace=workspace, name=name, active={"In Progress": 5})


@pytest.fixture
def team(owner):
    """olivia owns two boards; alice is a member who may hold one task in progress."""
    first = kanban(MembershipFactory(user=owner, role=Role.OWNER).workspace, "Delivery")
    workspace = first[0].workflow.workspace
    second = kanban(workspace, "Support")
    alice = UserFactory(username="alice")
    MembershipFactory(workspace=workspace, user=alice, role=Role.MEMBER, wip_limit=1)
    return workspace, alice, first, second


def make(step, actor, title="task", **kwargs):
    return admission.task_create(workflow=step.workflow, step=step, actor=actor, title=title, **kwargs).task


def step_of(task):
    return Task.objects.get(pk=task.pk).step


def version(step) -> int:
    return Workflow.objects.get(pk=step.workflow_id).version


class TestTheMembersApi:
    def test_each_member_shows_their_limit_and_their_work_in_progress_on_every_board(self, team, owner):
        workspace, alice, (backlog, doing, done), (_, support, _) = team
        Membership.objects.filter(user=alice).update(wip_limit=5)
        make(doing, owner, assignee_id=alice.pk)
        make(support, owner, assignee_id=alice.pk)
        make(backlog, owner, assignee_id=owner.pk)  # pulled: olivia's, in progress
        make(done, owner, assignee_id=alice.pk)  # not in progress
        archived = make(doing, owner, assignee_id=alice.pk)
        admission.task_archive(task=archived, actor=owner)
        make(doing, owner, assignee_id=alice.pk, is_ephemeral=True)

        listed = api_for(alice).get(members_url(workspace))

        assert listed.json() == [
            {"user_id": alice.pk, "username": "alice", "role": "member", "wip_limit": 5, "occupied": 2},
            {"user_id": owner.pk, "username": "olivia", "role": "owner", "wip_limit": 0, "occupied": 1},
        ]

    def test_the_list_costs_the_same_queries_for_two_members_or_ten(self, team, owner):
        workspace, alice, (backlog, doing, _), _ = team
        make(doing, owner, assignee_id=alice.pk)

        def queries():
            with CaptureQueriesContext(connection) as captured:
                assert api_for(owner).get(members_url(workspace)).status_code == 200
            return len(captured)

        few = queries()
        for _ in range(8):
            member = MembershipFactory(workspace=workspace, role=Role.MEMBER, wip_limit=2).user
            make(backlog, owner, assignee_id=member.pk)
        assert queries() == few == 3  # the caller's role, the workspace, the members with their counts

    def test_an_owner_sets_a_limit_when_adding_or_later(self, team, owner):
        workspace, _, _, _ = team
        vera = UserFactory(username="vera")
        api = api_for(owner)

        added = api.post(members_url(workspace), {"username": "vera", "wip_limit": 2}, format="json")
        invitations.invitation_accept(invitation_id=added.json()["id"], user=vera)  # she says yes
        joined = next(m for m in api.get(members_url(workspace)).json() if m["username"] == "vera")
        changed = api.patch(members_url(workspace, vera), {"wip_limit": 4}, format="json")

        assert (added.status_code, added.json()["wip_limit"]) == (202, 2)
        assert (joined["wip_limit"], joined["occupied"]) == (2, 0)
        assert (changed.status_code, changed.json()["wip_limit"]) == (200, 4)
        assert Membership.objects.get(workspace=workspace, user=vera).wip_limit == 4

    @pytest.mark.parametrize("value", [-1, 100_001, "many", None])
    def test_a_limit_is_a_bounded_whole_number(self, team, owner, value):
        workspace, alice, _, _ = team
        response = api_for(owner).patch(members_url(workspace, alice), {"wip_limit": value}, format="json")
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {"wip_limit"}
        assert Membership.objects.get(user=alice).wip_limit == 1

    def test_only_owners_set_limits(self, team):
        workspace, alice, _, _ = team
        response = api_for(alice).patch(members_url(workspace, alice), {"wip_limit": 9}, format="json")
        assert response.status_code == 403
        assert Membership.objects.get(user=alice).wip_limit == 1


class TestRaisingALimit:
    def test_fills_every_board_where_the_persons_work_waits_after_commit(
        self, team, owner, django_capture_on_commit_callbacks
    ):
        workspace, alice, (backlog, doing, _), (support_backlog, support, _) = team
        make(doing, owner, assignee_id=alice.pk)
        waiting = [make(backlog, owner, assignee_id=alice.pk), make(support_backlog, owner, assignee_id=alice.pk)]
        assert [step_of(t) for t in waiting] == [backlog, support_backlog]  # she is full

        with django_capture_on_commit_callbacks(execute=True):
            response = api_for(owner).patch(members_url(workspace, alice), {"wip_limit": 3}, format="json")

        assert [step_of(t) for t in waiting] == [doing, support]
        assert response.json()["occupied"] == 1  # as of the change; the boards filled after it

    def test_no_limit_at_all_is_a_raised_limit(self, team, owner, django_capture_on_commit_callbacks):
        workspace, alice, (backlog, doing, _), _ = team
        make(doing, owner, assignee_id=alice.pk)
        waiting = make(backlog, owner, assignee_id=alice.pk)
        before = version(doing)

        with django_capture_on_commit_callbacks(execute=True):
            api_for(owner).patch(members_url(workspace, alice), {"wip_limit": 0}, format="json")

        assert step_of(waiting) == doing
        assert version(doing) == before + 1  # the fill, a change of the board's own


class TestLosingTheRightToTasks:
    def test_a_removed_member_is_unassigned_on_every_board_each_in_its_own_change(
        self, team, owner, django_capture_on_commit_callbacks
    ):
        workspace, alice, (backlog, doing, _), (support_backlog, support, _) = team
        hers = [
            make(doing, owner, assignee_id=alice.pk),
            make(backlog, owner, "waiting for her", assignee_id=alice.pk),
            make(support_backlog, owner, "waiting on the other board", assignee_id=alice.pk),
        ]
        versions = (version(doing), version(support))

        with django_capture_on_commit_callbacks(execute=True):
            response = api_for(owner).delete(members_url(workspace, alice))

        assert response.status_code == 204
        assert not Task.objects.filter(assignee=alice).exists()
        assert (version(doing), version(support)) == (versions[0] + 1, versions[1] + 1)
        # Nobody's now, so each board's pull took hers in the same change.
        assert [step_of(t) for t in hers] == [doing, doing, support]
        events = TaskEvent.objects.filter(kind=EventKind.ASSIGNED, detail__previous=alice.pk)
        assert {(e.task_id, e.actor, e.detail["assignee_id"]) for e in events} == {(t.pk, owner, None) for t in hers}

    def test_someone_leaving_gives_up_their_tasks_too(self, team, owner, django_capture_on_commit_callbacks):
        workspace, alice, (_, doing, _), _ = team
        task = make(doing, owner, assignee_id=alice.pk)

        with django_capture_on_commit_callbacks(execute=True):
            assert api_for(alice).delete(members_url(workspace, alice)).status_code == 204

        assert Task.objects.get(pk=task.pk).assignee_id is None

    def test_a_member_made_viewer_is_unassigned(self, team, owner, django_capture_on_commit_callbacks):
        workspace, alice, (_, doing, _), _ = team
        task = make(doing, owner, assignee_id=alice.pk)

        with django_capture_on_commit_callbacks(execute=True):
            api_for(owner).patch(members_url(workspace, alice), {"role": "viewer"}, format="json")

        assert Task.objects.get(pk=task.pk).assignee_id is None
        assert TaskEvent.objects.get(task_id=task.pk, kind=EventKind.ASSIGNED).detail["previous"] == alice.pk

    def test_an_owner_made_member_keeps_their_tasks(self, team, owner, django_capture_on_commit_callbacks):
        workspace, _, (_, doing, _), _ = team
        second = MembershipFactory(workspace=workspace, role=Role.OWNER).user
        task = make(doing, owner, assignee_id=second.pk)

        with django_capture_on_commit_callbacks(execute=True):
            api_for(owner).patch(members_url(workspace, second), {"role": "member"}, format="json")

        assert Task.objects.get(pk=task.pk).assignee_id == second.pk

    def test_the_members_page_removes_the_same_way(self, team, owner, django_capture_on_commit_callbacks):
        workspace, alice, (_, doing, _), _ = team
        task = make(doing, owner, assignee_id=alice.pk)
        page = Client()
        page.force_login(owner)

        with django_capture_on_commit_callbacks(execute=True):
            page.post(f"/workspaces/{workspace.pk}/members/", {"action": "remove", "user_id": str(alice.pk)})

        assert Task.objects.get(pk=task.pk).assignee_id is None
        assert not Membership.objects.filter(user=alice).exists()


def test_person_gauges_are_read_at_scrape_time(team, owner):
    workspace, alice, (_, doing, _), (_, support, _) = team
    Membership.objects.filter(user=alice).update(wip_limit=3)
    make(doing, owner, assignee_id=alice.pk)
    make(support, owner, assignee_id=alice.pk)
    make(doing, owner, assignee_id=owner.pk)  # olivia has no limit: no gauge
    client = Client()
    client.force_login(UserFactory(username="ops", is_staff=True))

    samples = scrape(client.get("/metrics").content.decode())

    hers = {"workspace": str(workspace.pk), "user": str(alice.pk)}
    assert value(samples, "kandev_person_occupancy", **hers) == 2
    assert value(samples, "kandev_person_wip_limit", **hers) == 3
    people = {dict(labels)["user"] for name, labels in samples if name.startswith("kandev_person_")}
    assert people == {str(alice.pk)}
