"""Agent sessions: status machine, the seed scenario, limits, promotion and recovery."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from agents import services
from agents.models import HOLDING_SLOT, AgentSession, SessionStatus
from agents.services import IllegalSessionTransition, SessionLimitReached
from boards import admission
from boards.changes import reconcile_all
from boards.models import EventKind, Task, TaskEvent
from common.errors import Conflict, Forbidden, Invalid
from tests.agents.conftest import AUTO_START, run_turn, session_of, statuses
from tests.factories import StepFactory, UserFactory, WorkflowFactory
from workflows import services as workflow_services
from workflows.models import Membership, OnSessionLimit, Role

S = SessionStatus


def holding(workflow) -> int:
    return AgentSession.objects.filter(workflow=workflow, status__in=HOLDING_SLOT).count()


class TestStatusMachine:
    def test_the_happy_path_sets_its_timestamps(self, agent_step, make_task):
        session = session_of(make_task(agent_step))
        assert (session.status, session.started_at is not None, session.lease_expires_at) == (
            S.STARTING,
            True,
            None,
        )
        session = services.session_event(session=session, type="boot_ready")
        assert session.status == S.RUNNING and session.lease_expires_at is not None
        session = services.session_event(session=session, type="turn_completed", detail="done")
        assert (session.status, session.detail, session.lease_expires_at) == (
            S.COMPLETED,
            "done",
            None,
        )
        assert session.finished_at is not None

    @pytest.mark.parametrize(
        "status, event",
        [
            (S.QUEUED, "boot_ready"),
            (S.QUEUED, "turn_completed"),
            (S.QUEUED, "failed"),
            (S.STARTING, "turn_completed"),
            (S.COMPLETED, "boot_ready"),
            (S.COMPLETED, "failed"),
            (S.FAILED, "turn_completed"),
            (S.CANCELLED, "boot_ready"),
        ],
    )
    def test_illegal_transitions_are_409_and_change_nothing(self, agent_step, make_task, status, event):
        session = session_of(make_task(agent_step))
        AgentSession.objects.filter(pk=session.pk).update(status=status)
        with pytest.raises(IllegalSessionTransition) as refused:
            services.session_event(session=session, type=event)
        assert refused.value.status_code == 409
        assert refused.value.as_body()["code"] == "illegal_session_transition"
        assert AgentSession.objects.get(pk=session.pk).status == status

    @pytest.mark.parametrize("status", [S.QUEUED, S.STARTING, S.RUNNING])
    def test_cancel_works_from_every_live_state(self, agent_step, make_task, owner, status):
        session = session_of(make_task(agent_step))
        AgentSession.objects.filter(pk=session.pk).update(status=status)
        session = services.session_cancel(session=session, actor=owner, reason="wrong task")
        assert (session.status, session.detail) == (S.CANCELLED, "wrong task")

    @pytest.mark.parametrize("status", [S.COMPLETED, S.FAILED])
    def test_a_finished_session_cannot_be_cancelled(self, agent_step, make_task, owner, status):
        session = session_of(make_task(agent_step))
        AgentSession.objects.filter(pk=session.pk).update(status=status)
        with pytest.raises(IllegalSessionTransition):
            services.session_cancel(session=session, actor=owner)

    def test_heartbeat_extends_the_lease_only_while_live(self, agent_step, make_task):
        session = run_turn(session_of(make_task(agent_step)), outcome="boot_ready")
        AgentSession.objects.filter(pk=session.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert services.session_heartbeat(session=session).lease_expires_at > timezone.now()
        services.session_event(session=session, type="failed", detail="crashed")
        with pytest.raises(IllegalSessionTransition):
            services.session_heartbeat(session=session)

    def test_a_task_has_one_live_session(self, agent_step, make_task, owner):
        task = make_task(agent_step)
        with pytest.raises(Conflict) as refused:
            services.session_start(task=task, actor=owner)
        assert refused.value.code == "session_already_live"
        run_turn(session_of(task))
        assert services.session_start(task=task, actor=owner).status == S.STARTING


class TestSeedScenario:
    """PR Review: Waiting -> Review (limit 2, auto_start_agent, then move_to_next) -> Done."""

    @pytest.fixture
    def review_board(self, owner):
        workspace = workflow_services.workspace_create(name="Reviews", owner=owner)
        workflow = workflow_services.workflow_create(workspace=workspace, name="PRs", template="pr_review")
        return workflow, *workflow.steps.order_by("position")

    def test_the_task_stays_through_boot_and_turn_and_advances_once(self, review_board, owner):
        workflow, waiting, review, done = review_board
        prs = [admission.task_create(workflow=workflow, actor=owner, title=f"PR {i}").task for i in range(3)]
        # Review pulled what fits as they arrived: PR 0 and PR 1, each starting an agent
        assert [Task.objects.get(pk=t.pk).step for t in prs] == [review, review, waiting]
        assert statuses(prs[:2]) == [S.STARTING, S.STARTING]
        session = session_of(prs[0])

        session = services.session_event(session=session, type="boot_ready")
        services.session_heartbeat(session=session)
        assert Task.objects.get(pk=prs[0].pk).step == review

        services.session_event(session=session, type="turn_completed")
        services.session_event(session=session, type="turn_completed")  # delivered twice

        assert [Task.objects.get(pk=t.pk).step for t in prs] == [done, review, review]
        assert TaskEvent.objects.filter(task_id=prs[0].pk, kind=EventKind.MOVED, to_step=done).count() == 1
        assert statuses(prs) == [S.COMPLETED, S.STARTING, S.STARTING]

    def test_review_does_not_pull_a_task_an_agent_is_working_on(self, workflow, make_task, owner):
        doing = StepFactory(workflow=workflow, name="Doing", position=0, events=AUTO_START)
        review = StepFactory(workflow=workflow, name="Review", position=1, wip_limit=1, pull_from_step=doing)
        done = StepFactory(workflow=workflow, name="Done", position=2)
        working = make_task(doing, "working")
        reviewed = make_task(review, "reviewed")
        admission.task_move(task=reviewed, to_step=done, actor=owner)
        assert Task.objects.get(pk=working.pk).step == doing
        run_turn(session_of(working))  # its agent is done: Review pulls it in the same commit
        assert Task.objects.get(pk=working.pk).step == review
        assert reconcile_all() == 0


class TestLimits:
    def test_workflow_limit_queues_by_default(self, agent_step, make_task):
        agent_step.workflow.max_parallel_sessions = 2
        agent_step.workflow.save()
        tasks = [make_task(agent_step, f"t{i}") for i in range(4)]
        assert statuses(tasks) == [S.STARTING, S.STARTING, S.QUEUED, S.QUEUED]

    def test_reject_creates_no_session_and_records_why(self, agent_step, make_task):
        workflow = agent_step.workflow
        workflow.max_parallel_sessions, workflow.on_session_limit = 1, OnSessionLimit.REJECT
        workflow.save()
        first, second = make_task(agent_step, "first"), make_task(agent_step, "second")
        assert statuses([first]) == [S.STARTING]
        assert not AgentSession.objects.filter(task=second).exists()
        record = TaskEvent.objects.get(task_id=second.pk, kind=EventKind.SESSION)
        assert record.detail == {
            "action": "session_rejected",
            "scope": "workflow",
            "limit": 1,
            "holding": 1,
            "version": workflow.__class__.objects.get(pk=workflow.pk).version,  # its change
        }

    def test_a_manual_start_refused_by_reject_is_409_and_leaves_nothing(self, agent_step, make_task, owner):
        workflow = agent_step.workflow
        workflow.max_parallel_sessions, workflow.on_session_limit = 1, OnSessionLimit.REJECT
        workflow.save()
        make_task(agent_step, "first")
        plain = StepFactory(workflow=workflow, name="Plain", position=1)
        task = make_task(plain, "by hand")
        events = TaskEvent.objects.count()
        with pytest.raises(SessionLimitReached) as refused:
            services.session_start(task=task, actor=owner)
        assert refused.value.as_body()["scope"] == "workflow"
        assert not AgentSession.objects.filter(task=task).exists()
        assert TaskEvent.objects.count() == events

    def test_the_workspace_limit_is_checked_first_and_spans_its_boards(self, agent_step, make_task):
        workspace = agent_step.workflow.workspace
        workspace.max_concurrent_sessions = 1
        workspace.save()
        other = WorkflowFactory(workspace=workspace, on_session_limit=OnSessionLimit.REJECT, max_parallel_sessions=1)
        other_step = StepFactory(workflow=other, name="Agents", position=0, events=AUTO_START)
        make_task(agent_step, "here")
        elsewhere = make_task(other_step, "elsewhere")
        record = TaskEvent.objects.get(task_id=elsewhere.pk, kind=EventKind.SESSION)
        assert record.detail["scope"] == "workspace"

    @override_settings(KANDEV_MAX_CONCURRENT_SESSIONS_PER_WORKSPACE=1)
    def test_a_null_workspace_limit_uses_the_setting(self, agent_step, make_task):
        tasks = [make_task(agent_step, f"t{i}") for i in range(2)]
        assert statuses(tasks) == [S.STARTING, S.QUEUED]

    def test_zero_means_unlimited(self, agent_step, make_task):
        workspace = agent_step.workflow.workspace
        workspace.max_concurrent_sessions = 0
        workspace.save()
        assert set(statuses([make_task(agent_step, f"t{i}") for i in range(5)])) == {S.STARTING}

    def test_an_owner_may_force_past_the_limits_with_a_reason(self, agent_step, make_task, owner):
        workflow = agent_step.workflow
        workflow.max_parallel_sessions, workflow.on_session_limit = 1, OnSessionLimit.REJECT
        workflow.save()
        make_task(agent_step, "first")
        plain = StepFactory(workflow=workflow, name="Plain", position=1)
        task = make_task(plain, "urgent")
        member = UserFactory()
        Membership.objects.create(workspace=workflow.workspace, user=member, role=Role.MEMBER)
        with pytest.raises(Forbidden):
            services.session_start(task=task, actor=member, force=True, reason="hotfix")
        with pytest.raises(Invalid):
            services.session_start(task=task, actor=owner, force=True)
        session = services.session_start(task=task, actor=owner, force=True, reason="hotfix")
        assert (session.status, session.forced, session.reason, session.actor) == (
            S.STARTING,
            True,
            "hotfix",
            owner,
        )
        record = TaskEvent.objects.get(task_id=task.pk, kind=EventKind.SESSION)
        assert (record.actor, record.reason, record.detail["bypassed"]) == (
            owner,
            "hotfix",
            ["workflow"],
        )

    def test_start_session_command_forces_as_an_operator(self, agent_step, make_task, capsys):
        agent_step.workflow.max_parallel_sessions = 1
        agent_step.workflow.save()
        make_task(agent_step, "first")
        plain = StepFactory(workflow=agent_step.workflow, name="Plain", position=1)
        task = make_task(plain, "urgent")
        call_command("start_session", str(task.pk), "--force", "--reason", "incident 42")
        assert "is starting" in capsys.readouterr().out
        assert session_of(task).forced


ENDED_AS = {
    "completed": S.COMPLETED,
    "failed": S.FAILED,
    "cancelled": S.CANCELLED,
    "archived": S.CANCELLED,
    "deleted": S.CANCELLED,
    "lease_expired": S.FAILED,
}
ENDINGS = list(ENDED_AS)


def end(session: AgentSession, how: str, owner) -> None:
    task = Task.objects.get(pk=session.task_id)
    if how == "completed":
        run_turn(session)
    elif how == "failed":
        run_turn(session, outcome="failed")
    elif how == "cancelled":
        call_command("cancel_session", str(session.pk))
    elif how == "archived":
        admission.task_archive(task=task, actor=owner)
    elif how == "deleted":
        admission.task_delete(task=task, actor=owner)
    else:
        services.session_claim(user=owner, runner="r1")
        AgentSession.objects.filter(pk=session.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        call_command("kandev_worker", "--once")


class TestPromotion:
    @pytest.mark.parametrize("how", ENDINGS)
    def test_any_terminal_state_promotes_the_oldest_queued_session(self, agent_step, make_task, owner, how):
        workflow = agent_step.workflow
        workflow.max_parallel_sessions = 1
        workflow.save()
        first, second, third = (make_task(agent_step, t) for t in ("first", "second", "third"))
        assert statuses([first, second, third]) == [S.STARTING, S.QUEUED, S.QUEUED]
        ended = session_of(first)
        end(ended, how, owner)
        assert AgentSession.objects.get(pk=ended.pk).status == ENDED_AS[how]
        assert statuses([second, third]) == [S.STARTING, S.QUEUED]
        assert holding(workflow) == 1
        end(session_of(second), how, owner)
        end(session_of(third), how, owner)
        assert holding(workflow) == 0
        assert not AgentSession.objects.filter(workflow=workflow, status=S.QUEUED).exists()

    def test_ending_a_session_promotes_in_other_boards_of_the_workspace_after_commit(
        self, agent_step, make_task, django_capture_on_commit_callbacks
    ):
        workspace = agent_step.workflow.workspace
        workspace.max_concurrent_sessions = 1
        workspace.save()
        other_step = StepFactory(workflow=WorkflowFactory(workspace=workspace), name="A", position=0, events=AUTO_START)
        here = make_task(agent_step, "here")
        there = make_task(other_step, "there")
        assert statuses([here, there]) == [S.STARTING, S.QUEUED]
        with django_capture_on_commit_callbacks(execute=True):
            run_turn(session_of(here))
        assert statuses([there]) == [S.STARTING]

    def test_lease_expiry_fails_the_session_and_frees_its_slot(self, agent_step, make_task, owner):
        agent_step.workflow.max_parallel_sessions = 1
        agent_step.workflow.save()
        crashed, waiting = make_task(agent_step, "crashed"), make_task(agent_step, "waiting")
        claimed = services.session_claim(user=owner, runner="r1")
        services.session_event(session=claimed, type="boot_ready")
        assert services.reconcile_sessions() == (0, 0)  # the lease is still good
        AgentSession.objects.filter(pk=claimed.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert services.reconcile_sessions() == (
            1,
            0,
        )  # promoted in the same transaction as the failure
        failed = session_of(crashed)
        assert (failed.status, failed.detail) == (
            S.FAILED,
            "The runner's lease expired (no heartbeat).",
        )
        assert statuses([waiting]) == [S.STARTING]

    def test_a_queued_session_whose_task_moved_on_is_cancelled_not_started(self, agent_step, make_task, owner):
        agent_step.workflow.max_parallel_sessions = 1
        agent_step.workflow.save()
        elsewhere = StepFactory(workflow=agent_step.workflow, name="Elsewhere", position=1)
        first, moved, next_ = (make_task(agent_step, t) for t in ("first", "moved", "next"))
        admission.task_move(task=moved, to_step=elsewhere, actor=owner)
        run_turn(session_of(first))
        stale = session_of(moved)
        assert (stale.status, stale.detail) == (
            S.CANCELLED,
            "Cancelled: the task left the step before a slot opened.",
        )
        assert statuses([next_]) == [S.STARTING]

    def test_an_unclaimed_starting_session_waits_for_a_runner(self, agent_step, make_task):
        task = make_task(agent_step)
        assert services.reconcile_sessions() == (0, 0)
        assert statuses([task]) == [S.STARTING]

    def test_the_worker_promotes_what_a_raised_limit_lets_in(self, agent_step, make_task, capsys):
        agent_step.workflow.max_parallel_sessions = 1
        agent_step.workflow.save()
        tasks = [make_task(agent_step, f"t{i}") for i in range(3)]
        agent_step.workflow.max_parallel_sessions = 2
        agent_step.workflow.save()
        call_command("kandev_worker", "--once")
        assert "sessions promoted: 1" in capsys.readouterr().out
        assert statuses(tasks) == [S.STARTING, S.STARTING, S.QUEUED]


class TestRetiredTasks:
    def test_archiving_a_task_cancels_its_live_session(self, agent_step, make_task, owner):
        task = make_task(agent_step)
        admission.task_archive(task=task, actor=owner)
        session = session_of(task)
        assert (session.status, session.detail) == (
            S.CANCELLED,
            "Cancelled: the task was archived.",
        )

    def test_deleting_a_task_cancels_and_keeps_the_run_on_record(self, agent_step, make_task, owner):
        task = make_task(agent_step)
        session_id = session_of(task).pk
        admission.task_delete(task=task, actor=owner)
        session = AgentSession.objects.get(pk=session_id)
        assert (session.status, session.task_id, session.detail) == (
            S.CANCELLED,
            None,
            "Cancelled: the task was deleted.",
        )
        with pytest.raises(IllegalSessionTransition):
            services.session_event(session=session, type="boot_ready")
