"""Session limits under real concurrency: threads behind a barrier, one connection each.

Every dimension: N concurrent starts against a limit k start exactly k; the rest are
queued or rejected. Repeated, on fresh boards, so a lucky interleaving cannot pass.
"""

import pytest
from django.core.management import call_command
from prometheus_client import REGISTRY

from agents import services
from agents.models import HOLDING_SLOT, AgentSession, SessionStatus
from boards import admission
from boards.models import EventKind, Task, TaskEvent
from common.errors import WipLimitReached
from tests.agents.conftest import AUTO_START, REVIEW, race, run_turn
from tests.factories import StepFactory, WorkflowFactory, WorkspaceFactory
from workflows.models import Membership, OnSessionLimit, Role

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 5
N = 8
K = 3
S = SessionStatus


def agent_board(workspace, owner, **workflow_fields):
    workflow = WorkflowFactory(workspace=workspace, **workflow_fields)
    Membership.objects.get_or_create(workspace=workspace, user=owner, defaults={"role": Role.OWNER})
    step = StepFactory(workflow=workflow, name="Agents", position=0, is_start_step=True, events=AUTO_START)
    return workflow, step


def count(status, **scope) -> int:
    return AgentSession.objects.filter(status=status, **scope).count()


def holding(**scope) -> int:
    return AgentSession.objects.filter(status__in=HOLDING_SLOT, **scope).count()


def create_in(step, owner, title):
    return admission.task_create(workflow=step.workflow, step=step, actor=owner, title=title)


class TestWorkflowLimit:
    @pytest.mark.parametrize("on_limit", [OnSessionLimit.QUEUE, OnSessionLimit.REJECT])
    def test_n_concurrent_admissions_start_exactly_k(self, owner, on_limit):
        for round_ in range(ROUNDS):
            workflow, step = agent_board(WorkspaceFactory(), owner, max_parallel_sessions=K, on_session_limit=on_limit)
            _, errors = race(N, lambda i, step=step, r=round_: create_in(step, owner, f"{r}-{i}"))
            assert errors == []
            assert Task.objects.filter(workflow=workflow).count() == N
            assert count(S.STARTING, workflow=workflow) == K
            if on_limit == OnSessionLimit.QUEUE:
                assert count(S.QUEUED, workflow=workflow) == N - K
            else:
                assert AgentSession.objects.filter(workflow=workflow).count() == K
                rejected = TaskEvent.objects.filter(workflow=workflow, kind=EventKind.SESSION)
                assert rejected.count() == N - K

    def test_n_concurrent_manual_starts_start_exactly_k(self, owner):
        for round_ in range(ROUNDS):
            workflow = WorkflowFactory(workspace=WorkspaceFactory(), max_parallel_sessions=K)
            Membership.objects.create(workspace=workflow.workspace, user=owner, role=Role.OWNER)
            plain = StepFactory(workflow=workflow, name="Plain", position=0)
            tasks = [create_in(plain, owner, f"{round_}-{i}").task for i in range(N)]
            results, errors = race(N, lambda i, tasks=tasks: services.session_start(task=tasks[i], actor=owner))
            assert errors == []
            assert sorted(s.status for s in results).count(S.STARTING) == K
            assert count(S.STARTING, workflow=workflow) == K
            assert count(S.QUEUED, workflow=workflow) == N - K


class TestWorkspaceLimit:
    def test_n_concurrent_admissions_across_boards_start_exactly_k(self, owner):
        for round_ in range(ROUNDS):
            workspace = WorkspaceFactory(max_concurrent_sessions=K)
            steps = [agent_board(workspace, owner)[1] for _ in range(3)]
            _, errors = race(N, lambda i, steps=steps, r=round_: create_in(steps[i % 3], owner, f"{r}-{i}"))
            assert errors == []
            assert holding(workflow__workspace=workspace) == K
            assert count(S.QUEUED, workflow__workspace=workspace) == N - K

    def test_endings_and_starts_on_different_boards_never_deadlock_or_leak(self, owner):
        for round_ in range(ROUNDS):
            workspace = WorkspaceFactory(max_concurrent_sessions=2)
            _, busy = agent_board(workspace, owner)
            other, fresh = agent_board(workspace, owner)
            running = [
                run_turn(
                    AgentSession.objects.get(task=create_in(busy, owner, f"busy{i}").task),
                    outcome="boot_ready",
                )
                for i in range(2)
            ]

            def work(i, running=running, fresh=fresh, r=round_):
                if i < 2:
                    return run_turn(running[i])
                return create_in(fresh, owner, f"{r}-{i}")

            _, errors = race(N, work)
            assert errors == []
            # Both slots freed went to the new board (same transaction or after commit).
            assert holding(workflow__workspace=workspace) == 2
            assert holding(workflow=other) == 2
            assert count(S.QUEUED, workflow=other) == N - 2 - 2


class TestStepLimit:
    def test_the_wip_limit_bounds_tasks_and_so_sessions(self, owner):
        for round_ in range(ROUNDS):
            workflow, step = agent_board(WorkspaceFactory(), owner)
            step.wip_limit = K
            step.save()
            _, errors = race(N, lambda i, step=step, r=round_: create_in(step, owner, f"{r}-{i}"))
            assert len(errors) == N - K and all(isinstance(e, WipLimitReached) for e in errors)
            assert Task.objects.filter(workflow=workflow).count() == K
            assert count(S.STARTING, workflow=workflow) == K
            assert AgentSession.objects.filter(workflow=workflow).count() == K


class TestExactlyOnce:
    def test_concurrent_turn_completed_moves_the_task_once(self, owner):
        for round_ in range(ROUNDS):
            workflow = WorkflowFactory(workspace=WorkspaceFactory())
            Membership.objects.create(workspace=workflow.workspace, user=owner, role=Role.OWNER)
            review = StepFactory(workflow=workflow, name="Review", position=0, events=REVIEW)
            done = StepFactory(workflow=workflow, name="Done", position=1, events=AUTO_START)
            task = create_in(review, owner, f"pr {round_}").task
            session = run_turn(AgentSession.objects.get(task=task), outcome="boot_ready")
            results, errors = race(
                N,
                lambda i, session=session: services.session_event(session=session, type="turn_completed"),
            )
            assert errors == []
            assert {r.status for r in results} == {S.COMPLETED}
            assert Task.objects.get(pk=task.pk).step == done
            assert TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.MOVED).count() == 1
            # on_turn_complete ran once: one move, so Done's on_enter started one session.
            assert AgentSession.objects.filter(task=task, step=done).count() == 1


def queue_waits(workflow) -> float:
    return REGISTRY.get_sample_value("kandev_session_queue_wait_seconds_count", {"workflow": str(workflow.pk)}) or 0


class TestWorkers:
    def test_two_workers_never_double_promote(self, owner):
        for round_ in range(ROUNDS):
            workflow, step = agent_board(WorkspaceFactory(), owner, max_parallel_sessions=1)
            for i in range(N):
                create_in(step, owner, f"{round_}-{i}")
            assert count(S.QUEUED, workflow=workflow) == N - 1
            workflow.max_parallel_sessions = 1 + K
            workflow.save(update_fields=["max_parallel_sessions"])
            _, errors = race(2, lambda i: call_command("kandev_worker", "--once"))
            assert errors == []
            assert count(S.STARTING, workflow=workflow) == 1 + K
            assert count(S.QUEUED, workflow=workflow) == N - 1 - K
            assert queue_waits(workflow) == K

    def test_runners_never_claim_the_same_session(self, owner):
        for _ in range(ROUNDS):
            _, step = agent_board(WorkspaceFactory(), owner)
            sessions = {str(AgentSession.objects.get(task=create_in(step, owner, f"t{i}").task).pk) for i in range(3)}
            results, errors = race(
                N,
                lambda i, workspace_id=step.workflow.workspace_id: services.session_claim(
                    user=owner, runner=f"runner-{i}", workspace_id=workspace_id
                ),
            )
            assert errors == []
            claimed = [str(r.pk) for r in results if r is not None]
            assert sorted(claimed) == sorted(sessions)
