"""Intakes and review watches act for the person who made them: they
stop when that person is removed, made a viewer or deactivated, show why, and work again
only when an owner takes them over."""

import json
from importlib import import_module

import pytest
from django.apps import apps
from django.test import Client

from boards.models import Task
from integrations.intake import intake_create, signature_for
from integrations.models import Intake, ReviewWatch
from integrations.watch import poll_due_watches, poll_watch, watch_create
from teams import invitations, services
from tests.clients import api_for
from tests.factories import MembershipFactory, UserFactory
from tests.integrations.fake_github import FakeGitHub
from workflows.models import Membership, Role

pytestmark = pytest.mark.django_db
REPO = "acme/api"


def deliver(intake_id, secret, ref="ext-1"):
    body = json.dumps({"title": "From the outside", "external_ref": ref}).encode()
    return Client().post(
        f"/hooks/{intake_id}/",
        body,
        content_type="application/json",
        headers={"X-Hub-Signature-256": signature_for(secret, body)},
    )


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        fake.open_pull(REPO, 1, "Fix login")
        yield fake


@pytest.fixture
def mike(workflow):
    """A member of the workspace, who makes intakes and watches."""
    return MembershipFactory(workspace=workflow.workspace, user=UserFactory(username="mike"), role=Role.MEMBER).user


@pytest.fixture
def mikes_intake(board, mike):
    backlog, _, _ = board
    response = api_for(mike).post("/api/v1/intakes/", {"workflow_id": str(backlog.workflow_id)}, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"], response.json()["secret"]


def make_watch(api, step, github, token=None):
    body = {
        "workflow_id": str(step.workflow_id),
        "step_id": str(step.pk),
        "repositories": [REPO],
        "reviewer_login": "rita",
        "token": token or github.token,
        "api_base_url": github.base_url,
    }
    response = api.post("/api/v1/review-watches/", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def remove(workflow, owner, user):
    response = api_for(owner).delete(f"/api/v1/workspaces/{workflow.workspace_id}/members/{user.pk}/")
    assert response.status_code == 204, response.content


class TestIntakes:
    def test_the_list_shows_who_made_each_intake_and_that_it_is_in_force(self, api, mikes_intake):
        intake_id, _ = mikes_intake
        listed = api.get("/api/v1/intakes/").json()["results"]
        assert [(i["id"], i["created_by"], i["disabled_at"], i["disabled_reason"]) for i in listed] == [
            (intake_id, "mike", None, None)
        ]

    def test_a_removed_creators_intake_refuses_deliveries_and_says_why_in_the_list(
        self, api, workflow, owner, mike, mikes_intake
    ):
        intake_id, secret = mikes_intake
        assert deliver(intake_id, secret, "before").status_code == 201
        remove(workflow, owner, mike)
        refused = deliver(intake_id, secret, "after")
        assert (refused.status_code, refused.json()["code"]) == (403, "intake_disabled")
        assert list(Task.objects.values_list("external_ref", flat=True)) == ["before"]
        shown = api.get(f"/api/v1/intakes/{intake_id}/").json()
        assert (shown["created_by"], shown["disabled_reason"]) == ("mike", "creator_removed")
        assert shown["disabled_at"] is not None

    def test_an_unsigned_caller_still_learns_nothing_but_bad_signature(self, workflow, owner, mike, mikes_intake):
        intake_id, _ = mikes_intake
        remove(workflow, owner, mike)
        assert deliver(intake_id, "not-the-secret").json()["code"] == "bad_signature"

    def test_a_creator_made_a_viewer_stops_their_intake(self, api, workflow, mike, mikes_intake):
        intake_id, secret = mikes_intake
        api.patch(f"/api/v1/workspaces/{workflow.workspace_id}/members/{mike.pk}/", {"role": "viewer"}, format="json")
        assert deliver(intake_id, secret).status_code == 403
        assert Intake.objects.get(pk=intake_id).disabled_reason == "creator_viewer"

    def test_a_deactivated_creators_intake_stops(self, mike, mikes_intake):
        intake_id, secret = mikes_intake
        mike.is_active = False
        mike.save()
        assert deliver(intake_id, secret).status_code == 403
        assert Intake.objects.get(pk=intake_id).disabled_reason == "creator_deactivated"

    def test_a_deleted_creators_intake_stays_stopped(self, mike, mikes_intake):
        """Deleting the account leaves the intake without a creator, which would otherwise read
        as an operator's: it is disabled before the account goes."""
        intake_id, secret = mikes_intake
        mike.delete()
        assert deliver(intake_id, secret).status_code == 403
        assert Intake.objects.get(pk=intake_id).disabled_reason == "creator_deactivated"

    def test_a_membership_deleted_behind_the_services_is_caught_at_delivery(self, api, workflow, mike, mikes_intake):
        """The admin's membership inline deletes rows without the service: the delivery checks."""
        intake_id, secret = mikes_intake
        Membership.objects.filter(workspace=workflow.workspace, user=mike).delete()
        assert deliver(intake_id, secret).json()["code"] == "intake_disabled"
        assert api.get(f"/api/v1/intakes/{intake_id}/").json()["disabled_reason"] == "creator_removed"

    def test_coming_back_does_not_re_enable_it(self, api, workflow, owner, mike, mikes_intake):
        intake_id, secret = mikes_intake
        remove(workflow, owner, mike)
        invited = invitations.invitation_create(
            workspace=workflow.workspace, actor=owner, role=Role.MEMBER, username=mike.username
        )
        invitations.invitation_accept(invitation_id=invited.pk, user=mike)
        assert deliver(intake_id, secret).status_code == 403

    def test_an_owner_takes_it_over_with_a_new_secret_and_the_old_one_stops(
        self, api, workflow, owner, mike, mikes_intake
    ):
        intake_id, old_secret = mikes_intake
        remove(workflow, owner, mike)
        taken = api.post(f"/api/v1/intakes/{intake_id}/take-over/")
        assert taken.status_code == 200, taken.content
        body = taken.json()
        assert (body["created_by"], body["disabled_at"], body["disabled_reason"]) == ("olivia", None, None)
        assert body["secret"] != old_secret
        assert deliver(intake_id, old_secret).json()["code"] == "bad_signature"
        assert deliver(intake_id, body["secret"]).status_code == 201
        assert "secret" not in api.get(f"/api/v1/intakes/{intake_id}/").json()

    def test_only_owners_take_over_and_strangers_see_nothing(self, workflow, owner, mike, mikes_intake):
        intake_id, _ = mikes_intake
        remove(workflow, owner, mike)
        member = MembershipFactory(workspace=workflow.workspace, role=Role.MEMBER).user
        stranger = MembershipFactory(role=Role.OWNER).user
        url = f"/api/v1/intakes/{intake_id}/take-over/"
        assert api_for(member).post(url).status_code == 403
        assert api_for(stranger).post(url).status_code == 404
        assert api_for(mike).post(url).status_code == 404  # no longer a member
        assert Intake.objects.get(pk=intake_id).disabled_at is not None

    def test_rotating_the_secret_shows_the_new_one_once_and_the_old_one_stops_at_once(self, api, mikes_intake):
        intake_id, old_secret = mikes_intake
        rotated = api.post(f"/api/v1/intakes/{intake_id}/rotate-secret/")
        assert rotated.status_code == 200, rotated.content
        new_secret = rotated.json()["secret"]
        assert new_secret != old_secret and rotated.json()["created_by"] == "mike"  # still mike's intake
        assert deliver(intake_id, old_secret).status_code == 403
        assert deliver(intake_id, new_secret).status_code == 201
        assert new_secret not in json.dumps(api.get("/api/v1/intakes/").json())

    def test_only_owners_and_the_creator_rotate_a_secret(self, workflow, mike, mikes_intake):
        intake_id, _ = mikes_intake
        other = MembershipFactory(workspace=workflow.workspace, role=Role.MEMBER).user
        viewer = MembershipFactory(workspace=workflow.workspace, role=Role.VIEWER).user
        url = f"/api/v1/intakes/{intake_id}/rotate-secret/"
        assert api_for(other).post(url).status_code == 403
        assert api_for(viewer).post(url).status_code == 403
        assert api_for(MembershipFactory(role=Role.OWNER).user).post(url).status_code == 404
        assert api_for(mike).post(url).status_code == 200

    def test_a_removal_refused_as_the_last_owner_disables_nothing(self, api, workflow, owner, board):
        backlog, _, _ = board
        created = api.post("/api/v1/intakes/", {"workflow_id": str(backlog.workflow_id)}, format="json").json()
        refused = api.delete(f"/api/v1/workspaces/{workflow.workspace_id}/members/{owner.pk}/")
        assert (refused.status_code, refused.json()["code"]) == (409, "last_owner")
        assert deliver(created["id"], created["secret"]).status_code == 201

    def test_a_removal_that_fails_after_disabling_disables_nothing(
        self, workflow, owner, mike, mikes_intake, monkeypatch
    ):
        intake_id, secret = mikes_intake

        def broken_delete(self, *args, **kwargs):
            raise RuntimeError("the database went away")

        monkeypatch.setattr(Membership, "delete", broken_delete)
        with pytest.raises(RuntimeError):
            services.member_remove(workspace=workflow.workspace, user_id=mike.pk, actor=owner)
        assert Intake.objects.get(pk=intake_id).disabled_at is None
        monkeypatch.undo()
        assert deliver(intake_id, secret).status_code == 201


class TestReviewWatches:
    def test_a_removed_creators_watch_is_not_polled_and_says_why(self, api, board, workflow, owner, mike, github):
        _, doing, _ = board
        watch_id = make_watch(api_for(mike), doing, github)
        remove(workflow, owner, mike)
        assert poll_due_watches() == []
        assert github.requests == []  # mike's token went nowhere
        shown = api.get(f"/api/v1/review-watches/{watch_id}/").json()
        assert (shown["created_by"], shown["disabled_reason"], shown["enabled"]) == ("mike", "creator_removed", True)

    def test_a_direct_poll_of_a_watch_whose_creator_lost_access_sends_nothing(self, board, workflow, mike, github):
        _, doing, _ = board
        watch_id = make_watch(api_for(mike), doing, github)
        Membership.objects.filter(workspace=workflow.workspace, user=mike).update(role=Role.VIEWER)
        report = poll_watch(watch=ReviewWatch.objects.get(pk=watch_id))
        assert "disabled" in report.error
        assert github.requests == [] and not Task.objects.exists()
        assert ReviewWatch.objects.get(pk=watch_id).disabled_reason == "creator_viewer"

    def test_a_deactivated_creators_watch_is_not_polled(self, board, mike, github):
        _, doing, _ = board
        make_watch(api_for(mike), doing, github)
        mike.is_active = False
        mike.save(update_fields=["is_active"])
        assert poll_due_watches() == []

    def test_enabling_it_again_is_not_enough(self, board, workflow, owner, mike, github):
        _, doing, _ = board
        watch_id = make_watch(api_for(mike), doing, github)
        remove(workflow, owner, mike)
        patched = api_for(owner).patch(f"/api/v1/review-watches/{watch_id}/", {"enabled": True}, format="json")
        assert patched.json()["disabled_reason"] == "creator_removed"
        assert poll_due_watches() == []

    def test_an_owner_takes_it_over_with_their_own_token(self, api, board, workflow, owner, mike, github):
        _, doing, _ = board
        watch_id = make_watch(api_for(mike), doing, github, token="ghp-mikes-token")
        remove(workflow, owner, mike)
        url = f"/api/v1/review-watches/{watch_id}/take-over/"
        missing = api.post(url, {}, format="json")
        assert (missing.status_code, list(missing.json()["errors"])) == (400, ["token"])
        taken = api.post(url, {"token": github.token}, format="json")
        assert taken.status_code == 200, taken.content
        assert (taken.json()["created_by"], taken.json()["disabled_reason"]) == ("olivia", None)
        assert ReviewWatch.objects.get(pk=watch_id).token() == github.token
        assert poll_due_watches()[0].admitted == ["github:acme/api#1"]
        assert {r.authorization for r in github.requests} == {f"Bearer {github.token}"}

    def test_only_owners_take_a_watch_over(self, board, workflow, owner, mike, github):
        _, doing, _ = board
        watch_id = make_watch(api_for(mike), doing, github)
        remove(workflow, owner, mike)
        member = MembershipFactory(workspace=workflow.workspace, role=Role.MEMBER).user
        url = f"/api/v1/review-watches/{watch_id}/take-over/"
        assert api_for(member).post(url, {"token": "x"}, format="json").status_code == 403
        stranger = MembershipFactory(role=Role.OWNER).user
        assert api_for(stranger).post(url, {"token": "x"}, format="json").status_code == 404
        assert ReviewWatch.objects.get(pk=watch_id).disabled_at is not None


def test_the_migration_stops_credentials_whose_creator_lost_authority_before_it(board, workflow, owner, mike, github):
    """Intakes and watches made before this rule by people since removed, made viewers or
    deactivated are disabled when it is deployed, so the lists are right from the start."""
    backlog, doing, _ = board
    viewer = MembershipFactory(workspace=workflow.workspace, user=UserFactory(username="vera")).user
    gone = UserFactory(username="gus", is_active=False)
    intakes = {
        who.username: intake_create(workflow=workflow, step=backlog, actor=who)[0]
        for who in (owner, mike, viewer, gone)
    }
    operator = watch_create(workflow=workflow, step=doing, actor=None, repositories=[REPO], reviewer_login="rita")
    Membership.objects.filter(user=mike).delete()
    Membership.objects.filter(user=viewer).update(role=Role.VIEWER)
    Intake.objects.update(disabled_at=None, disabled_reason="")  # as before the rule
    import_module("integrations.migrations.0003_disable_lapsed_credentials").disable_lapsed(apps, None)
    reasons = {who: Intake.objects.get(pk=intake.pk).disabled_reason for who, intake in intakes.items()}
    assert reasons == {"olivia": "", "mike": "creator_removed", "vera": "creator_viewer", "gus": "creator_deactivated"}
    assert ReviewWatch.objects.get(pk=operator.pk).disabled_at is None
