"""A session no runner claims: it waits for one, is not counted as running, and fails with
that reason once the claim timeout has passed, freeing its slot (the background work's
reconcile, judged at a chosen `now` instead of sleeping)."""

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from agents import services
from agents.models import SessionStatus as S
from boards.admission import task_create
from tests.agents.conftest import race, session_of, statuses
from tests.factories import MembershipFactory, WorkspaceFactory
from workflows.models import Role, Workspace

TIMEOUT = 300  # the default of KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS
NO_RUNNER = "No runner claimed it within 300 seconds."


def later(seconds):
    return timezone.now() + timedelta(seconds=seconds)


def card(api, task) -> dict:
    board = api.get(f"/api/v1/workflows/{task.workflow_id}/board/").json()
    return next(t for s in board["steps"] for t in s["tasks"] if t["id"] == str(task.pk))


@pytest.fixture
def one_slot(agent_step):
    agent_step.workflow.max_parallel_sessions = 1
    agent_step.workflow.save()
    return agent_step


def test_an_unclaimed_session_fails_after_the_timeout_and_frees_its_slot(api, one_slot, make_task):
    phantom, waiting = make_task(one_slot, "phantom"), make_task(one_slot, "waiting")
    assert statuses([phantom, waiting]) == [S.STARTING, S.QUEUED]
    assert card(api, phantom)["session"]["waiting_for_runner"] is True
    assert services.reconcile_sessions(now=later(TIMEOUT - 60)) == (0, 0)  # still within its time

    assert services.reconcile_sessions(now=later(TIMEOUT + 1)) == (1, 0)  # promoted with the failure

    failed = session_of(phantom)
    assert (failed.status, failed.detail, failed.runner) == (S.FAILED, NO_RUNNER, "")
    assert statuses([waiting]) == [S.STARTING]  # the freed slot went to the queue
    shown = card(api, phantom)["session"]
    assert (shown["status"], shown["detail"], shown["waiting_for_runner"]) == ("failed", NO_RUNNER, False)
    assert phantom.step_id == failed.step_id  # the task stays where it was


def test_a_claimed_session_is_judged_by_its_lease_not_the_claim_timeout(api, agent_step, make_task, owner):
    task = make_task(agent_step)
    with override_settings(KANDEV_SESSION_LEASE_SECONDS=3600):
        claimed = services.session_claim(user=owner, runner="r1")
    assert claimed.task_id == task.pk
    assert services.reconcile_sessions(now=later(TIMEOUT + 1)) == (0, 0)
    assert statuses([task]) == [S.STARTING]
    board = api.get(f"/api/v1/workflows/{agent_step.workflow_id}/board/").json()
    assert (board["agents"]["running"], board["agents"]["unclaimed"]) == (1, 0)  # a runner holds it


@override_settings(KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS=0)
def test_a_timeout_of_zero_waits_for_a_runner_forever(agent_step, make_task):
    task = make_task(agent_step)
    assert services.reconcile_sessions(now=later(365 * 24 * 3600)) == (0, 0)
    assert statuses([task]) == [S.STARTING]


@pytest.mark.django_db(transaction=True)
@override_settings(KANDEV_SESSION_LEASE_SECONDS=3600)  # earlier rounds' claims stay good
def test_a_runner_claiming_as_the_timeout_fails_the_session_either_gets_it_or_sees_it_gone(agent_step, owner):
    """The claim and the reconcile race on real threads: the session is either claimed (and
    still starting) or failed as unclaimed, never failed while a runner holds it."""
    for round_ in range(5):
        task = task_create(workflow=agent_step.workflow, step=agent_step, actor=owner, title=f"t{round_}").task
        work = [
            lambda: services.session_claim(user=owner, runner="r1"),
            lambda: services.reconcile_sessions(now=later(TIMEOUT + 1)),
        ]
        (claimed, reconciled), errors = race(2, lambda i, work=work: work[i]())
        assert errors == []
        session = session_of(task)
        if claimed is not None:
            assert (session.status, session.runner, reconciled) == (S.STARTING, "r1", (0, 0))
        else:
            assert (session.status, session.detail, reconciled) == (S.FAILED, NO_RUNNER, (1, 0))


class TestRunnerSeen:
    """A runner asking for work is noted on the workspaces it may serve, so the board can say
    when sessions wait and no runner has been seen."""

    def test_a_claim_notes_the_runner_on_the_workspaces_it_may_write(self, owner):
        mine, viewed = WorkspaceFactory(), WorkspaceFactory()
        MembershipFactory(workspace=mine, user=owner, role=Role.MEMBER)
        MembershipFactory(workspace=viewed, user=owner, role=Role.VIEWER)
        assert services.session_claim(user=owner, runner="r1") is None  # nothing to run; still seen

        seen = dict(Workspace.objects.filter(pk__in=[mine.pk, viewed.pk]).values_list("pk", "runner_seen_at"))
        assert seen[mine.pk] is not None and seen[viewed.pk] is None

    def test_a_scoped_runner_is_noted_only_where_its_token_reaches(self, owner, workflow):
        other = WorkspaceFactory()
        MembershipFactory(workspace=other, user=owner, role=Role.OWNER)
        services.session_claim(user=owner, runner="r1", workspace_id=other.pk)
        workflow.workspace.refresh_from_db()
        other.refresh_from_db()
        assert workflow.workspace.runner_seen_at is None and other.runner_seen_at is not None

    def test_a_fresh_note_is_not_written_again(self, owner, workflow):
        services.session_claim(user=owner, runner="r1")
        first = Workspace.objects.get(pk=workflow.workspace_id).runner_seen_at
        services.session_claim(user=owner, runner="r1")
        assert Workspace.objects.get(pk=workflow.workspace_id).runner_seen_at == first
        Workspace.objects.filter(pk=workflow.workspace_id).update(runner_seen_at=later(-60))
        services.session_claim(user=owner, runner="r1")
        assert Workspace.objects.get(pk=workflow.workspace_id).runner_seen_at > first

    def test_the_workspace_api_shows_it_read_only(self, api, owner, workflow):
        url = f"/api/v1/workspaces/{workflow.workspace_id}/"
        assert api.get(url).json()["runner_seen_at"] is None
        assert api.patch(url, {"runner_seen_at": "2026-01-01T00:00:00Z"}, format="json").status_code == 200
        assert api.get(url).json()["runner_seen_at"] is None
        services.session_claim(user=owner, runner="r1")
        assert api.get(url).json()["runner_seen_at"] is not None
