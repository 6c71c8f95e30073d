"""Members of a workspace over the API: owners manage them, the
last owner stays."""

import threading

import pytest
from django.db import connection, transaction

from common.errors import Conflict
from teams import invitations, services
from tests.clients import api_for
from tests.concurrency import race, rounds, wait_until_a_backend_waits_on_a_lock
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db


@pytest.fixture
def team():
    workspace = WorkspaceFactory(name="Platform")
    owner = MembershipFactory(workspace=workspace, user=UserFactory(username="olivia"), role=Role.OWNER).user
    member = MembershipFactory(workspace=workspace, user=UserFactory(username="mike"), role=Role.MEMBER).user
    return workspace, owner, member


def members_url(workspace, user=None):
    base = f"/api/v1/workspaces/{workspace.pk}/members/"
    return base if user is None else f"{base}{user.pk}/"


def roles(workspace) -> dict:
    return dict(Membership.objects.filter(workspace=workspace).values_list("user__username", "role"))


def test_every_member_lists_the_members_with_their_roles(team):
    workspace, owner, member = team
    response = api_for(member).get(members_url(workspace))
    assert response.status_code == 200
    assert response.json() == [
        {"user_id": member.pk, "username": "mike", "role": "member", "wip_limit": 0, "occupied": 0},
        {"user_id": owner.pk, "username": "olivia", "role": "owner", "wip_limit": 0, "occupied": 0},
    ]


def accept(invitation: dict, user) -> None:
    """The invited person says yes (they join only then)."""
    invitations.invitation_accept(invitation_id=invitation["id"], user=user)


def test_an_owner_adds_an_existing_user_by_username_or_email(team):
    workspace, owner, _ = team
    vera = UserFactory(username="vera")
    wade = UserFactory(username="wade", email="Wade@Example.com")
    api = api_for(owner)
    invited = api.post(members_url(workspace), {"username": "vera", "role": "viewer"}, format="json")
    assert invited.status_code == 202
    accept(invited.json(), vera)
    added = api.post(members_url(workspace), {"email": "wade@example.com"}, format="json")
    assert added.status_code == 202
    assert added.json()["role"] == "member"  # the default
    accept(added.json(), wade)
    assert roles(workspace) == {"olivia": "owner", "mike": "member", "vera": "viewer", "wade": "member"}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"email": "not an address"}, "email"),
        ({}, "username"),
        ({"username": "vera", "email": "v@example.com"}, "username"),
        ({"username": "vera", "role": "king"}, "role"),
    ],
)
def test_adding_needs_one_username_or_address_and_a_known_role(team, body, field):
    workspace, owner, _ = team
    UserFactory(username="vera")
    response = api_for(owner).post(members_url(workspace), body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert "vera" not in roles(workspace)


def test_adding_someone_twice_is_a_conflict(team):
    workspace, owner, member = team
    response = api_for(owner).post(members_url(workspace), {"username": "mike", "role": "owner"}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "already_member"
    assert roles(workspace)["mike"] == "member"


def test_an_owner_changes_a_role(team):
    workspace, owner, member = team
    response = api_for(owner).patch(members_url(workspace, member), {"role": "viewer"}, format="json")
    assert response.status_code == 200
    assert response.json() == {
        "user_id": member.pk,
        "username": "mike",
        "role": "viewer",
        "wip_limit": 0,
        "occupied": 0,
    }


def test_the_last_owner_can_be_neither_demoted_nor_removed(team):
    workspace, owner, _ = team
    api = api_for(owner)
    demoted = api.patch(members_url(workspace, owner), {"role": "member"}, format="json")
    assert demoted.status_code == 409
    assert demoted.json()["code"] == "last_owner"
    removed = api.delete(members_url(workspace, owner))
    assert removed.status_code == 409
    assert removed.json() == {"code": "last_owner", "detail": "olivia is the last owner and cannot be removed."}
    assert roles(workspace)["olivia"] == "owner"


def test_with_a_second_owner_the_first_may_step_down(team):
    workspace, owner, member = team
    api = api_for(owner)
    assert api.patch(members_url(workspace, member), {"role": "owner"}, format="json").status_code == 200
    assert api.patch(members_url(workspace, owner), {"role": "member"}, format="json").status_code == 200
    assert roles(workspace) == {"olivia": "member", "mike": "owner"}


def test_members_may_leave_but_not_remove_others(team):
    workspace, owner, member = team
    other = MembershipFactory(workspace=workspace, user=UserFactory(username="nina")).user
    assert api_for(member).delete(members_url(workspace, other)).status_code == 403
    assert api_for(member).delete(members_url(workspace, member)).status_code == 204
    assert api_for(owner).delete(members_url(workspace, other)).status_code == 204
    assert roles(workspace) == {"olivia": "owner"}


def test_someone_not_in_the_workspace_is_not_found(team):
    workspace, owner, _ = team
    stranger = UserFactory(username="sam")
    assert api_for(owner).patch(members_url(workspace, stranger), {"role": "viewer"}, format="json").status_code == 404
    assert api_for(owner).delete(members_url(workspace, stranger)).status_code == 404


@pytest.mark.django_db(transaction=True)
@rounds(10)
def test_owners_all_stepping_down_at_once_leave_exactly_one_owner():
    workspace = WorkspaceFactory()
    owners = [MembershipFactory(workspace=workspace, role=Role.OWNER).user for _ in range(6)]

    def step_down(i):
        return services.member_update(workspace=workspace, user_id=owners[i].pk, role=Role.MEMBER)

    results = race(len(owners), step_down)
    refused = [r for r in results if isinstance(r, Exception)]
    assert [getattr(r, "code", r) for r in refused] == ["last_owner"], results
    assert Membership.objects.filter(workspace=workspace, role=Role.OWNER).count() == 1


@pytest.mark.django_db(transaction=True)
@rounds(10)
def test_owners_all_removing_each_other_at_once_leave_exactly_one_owner():
    workspace = WorkspaceFactory()
    owners = [MembershipFactory(workspace=workspace, role=Role.OWNER).user for _ in range(6)]

    def remove_the_next(i):
        return services.member_remove(workspace=workspace, user_id=owners[(i + 1) % len(owners)].pk)

    results = race(len(owners), remove_the_next)
    refused = [r for r in results if isinstance(r, Exception)]
    assert [getattr(r, "code", r) for r in refused] == ["last_owner"], results
    assert Membership.objects.filter(workspace=workspace, role=Role.OWNER).count() == 1


@pytest.mark.django_db(transaction=True)
def test_an_owner_stepping_down_waits_for_another_doing_so_then_is_refused():
    """Deterministic: the second demotion runs while the first holds its locks uncommitted."""
    assert connection.vendor == "postgresql", "row-lock waits are observed in pg_stat_activity"
    workspace = WorkspaceFactory()
    first, second = (MembershipFactory(workspace=workspace, role=Role.OWNER).user for _ in range(2))
    outcome = {}

    def competitor():
        try:
            services.member_update(workspace=workspace, user_id=second.pk, role=Role.MEMBER)
        except Conflict as refused:
            outcome["refused"] = refused.code
        finally:
            connection.close()

    competing = threading.Thread(target=competitor)
    with transaction.atomic():
        services.member_update(workspace=workspace, user_id=first.pk, role=Role.MEMBER)
        competing.start()
        outcome["waited"] = wait_until_a_backend_waits_on_a_lock()
    competing.join(timeout=30)
    assert outcome == {"waited": True, "refused": "last_owner"}
    assert roles(workspace) == {first.username: "member", second.username: "owner"}
