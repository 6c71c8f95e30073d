"""The admission rule at every door, on a locked board."""

import pytest

from boards import admission
from boards.models import EventKind, Task, TaskEvent
from common.errors import Conflict, Forbidden, Invalid, WipLimitReached
from tests.factories import MembershipFactory, StepFactory, UserFactory
from workflows.models import OnFull, Role


def live_titles(step):
    return list(Task.objects.occupying().filter(step=step).in_board_order().values_list("title", flat=True))


class TestCreate:
    def test_refuses_a_third_task_in_a_full_limit_2_step_and_persists_nothing(self, board, make_task, owner):
        # given
        _, doing, _ = board
        make_task(doing, "a")
        make_task(doing, "b")
        version = doing.workflow.__class__.objects.get(pk=doing.workflow_id).version
        events = TaskEvent.objects.count()
        # when
        with pytest.raises(WipLimitReached) as refused:
            admission.task_create(workflow=doing.workflow, step=doing, actor=owner, title="c", external_ref="gh:1")
        # then
        assert refused.value.as_body() == {
            "code": "wip_limit_reached",
            "scope": "step",
            "detail": 'Step "In Progress" is at its WIP limit (2 of 2).',
            "step": {"id": str(doing.pk), "name": "In Progress"},
            "limit": 2,
            "occupied": 2,
        }
        assert live_titles(doing) == ["a", "b"]
        assert not Task.objects.filter(title="c").exists()
        assert TaskEvent.objects.count() == events
        assert doing.workflow.__class__.objects.get(pk=doing.workflow_id).version == version

    def test_without_a_step_uses_the_start_step_and_the_same_rule(self, workflow, owner):
        start = StepFactory(workflow=workflow, name="Intake", position=0, is_start_step=True, wip_limit=2)
        StepFactory(workflow=workflow, name="Other", position=1)
        for title in ("a", "b"):
            assert admission.task_create(workflow=workflow, actor=owner, title=title).task.step == start
        with pytest.raises(WipLimitReached):
            admission.task_create(workflow=workflow, actor=owner, title="c")
        assert Task.objects.count() == 2

    def test_unlimited_step_takes_everything(self, board, make_task):
        _, _, done = board
        for i in range(20):
            make_task(done, f"t{i}")
        assert Task.objects.filter(step=done).count() == 20

    def test_ephemeral_tasks_do_not_count(self, board, make_task):
        _, doing, _ = board
        make_task(doing, "a")
        make_task(doing, "b")
        scratch = make_task(doing, "scratch", is_ephemeral=True)
        assert scratch.step == doing
        assert live_titles(doing) == ["a", "b"]

    def test_archived_tasks_do_not_count(self, board, make_task, owner):
        _, doing, _ = board
        a = make_task(doing, "a")
        make_task(doing, "b")
        admission.task_archive(task=a, actor=owner)
        make_task(doing, "c")
        assert live_titles(doing) == ["b", "c"]

    def test_position_defaults_to_last_and_ties_order_by_priority(self, board, make_task):
        _, _, done = board
        first = make_task(done, "first")
        second = make_task(done, "second")  # medium
        assert live_titles(done) == ["first", "second"]
        keys = {"first": first.position, "second": second.position}
        low = make_task(done, "low", position=second.position, priority=3)
        critical = make_task(done, "critical", position=second.position, priority=0)
        assert live_titles(done) == ["first", "critical", "second", "low"]
        assert low.position == critical.position == second.position  # the key as given
        assert dict(Task.objects.filter(title__in=keys).values_list("title", "position")) == keys  # none shifted
        assert make_task(done, "last").position > second.position
        assert live_titles(done)[-1] == "last"

    def test_a_live_external_ref_is_unique_per_workflow(self, board, make_task):
        backlog, _, _ = board
        make_task(backlog, "pr", external_ref="github:o/r#1")
        with pytest.raises(Conflict) as refused:
            make_task(backlog, "again", external_ref="github:o/r#1")
        assert refused.value.code == "external_ref_exists"


class TestMove:
    def test_move_into_a_full_step_is_refused_and_the_task_stays(self, board, make_task, owner):
        backlog, doing, _ = board
        make_task(doing, "a")
        make_task(doing, "b")
        waiting = make_task(backlog, "waiting")
        with pytest.raises(WipLimitReached):
            admission.task_move(task=waiting, to_step=doing, actor=owner)
        waiting.refresh_from_db()
        assert waiting.step == backlog
        assert not TaskEvent.objects.filter(task_id=waiting.pk, kind=EventKind.MOVED).exists()

    def test_reordering_inside_an_over_limit_step_is_allowed(self, board, make_task, owner):
        _, doing, _ = board
        make_task(doing, "a")
        b = make_task(doing, "b")
        admission.task_create(
            workflow=doing.workflow, step=doing, actor=owner, title="c", force=True, reason="incident"
        )
        admission.task_move(task=b, to_step=doing, actor=owner, position=0)
        assert live_titles(doing) == ["b", "a", "c"]

    def test_move_with_position_puts_the_task_at_that_index_and_the_others_keep_their_keys(
        self, board, make_task, owner
    ):
        backlog, _, done = board
        keys = {title: make_task(done, title).position for title in ("x", "y", "z")}
        task = make_task(backlog, "new")
        admission.task_move(task=task, to_step=done, actor=owner, position=1)
        assert live_titles(done) == ["x", "new", "y", "z"]
        assert dict(Task.objects.filter(title__in=keys).values_list("title", "position")) == keys

    def test_a_step_of_another_workflow_is_a_validation_error(self, board, make_task, owner):
        backlog, _, _ = board
        elsewhere = StepFactory(name="Elsewhere")
        task = make_task(backlog)
        with pytest.raises(Invalid):
            admission.task_move(task=task, to_step=elsewhere, actor=owner)


class TestBulkMove:
    def test_is_all_or_nothing(self, board, make_task, owner):
        _, doing, done = board
        make_task(doing, "a")
        tasks = [make_task(done, f"t{i}") for i in range(2)]
        with pytest.raises(WipLimitReached) as refused:
            admission.task_bulk_move(task_ids=[t.pk for t in tasks], to_step=doing, actor=owner)
        assert "room for 1 of the 2 tasks" in refused.value.detail
        assert Task.objects.filter(step=done).count() == 2
        assert live_titles(doing) == ["a"]

    def test_moves_everything_when_it_fits(self, board, make_task, owner):
        backlog, doing, done = board
        tasks = [make_task(backlog, f"t{i}") for i in range(3)]
        admission.task_bulk_move(task_ids=[t.pk for t in tasks], to_step=done, actor=owner)
        assert Task.objects.filter(step=done).count() == 3


class TestOtherDoors:
    def test_restore_is_an_admission(self, board, make_task, owner):
        _, doing, _ = board
        a = make_task(doing, "a")
        make_task(doing, "b")
        admission.task_archive(task=a, actor=owner)
        make_task(doing, "c")
        with pytest.raises(WipLimitReached):
            admission.task_restore(task=a, actor=owner)
        a.refresh_from_db()
        assert a.archived_at is not None

    def test_making_an_ephemeral_task_permanent_is_an_admission(self, board, make_task, owner):
        _, doing, _ = board
        make_task(doing, "a")
        make_task(doing, "b")
        scratch = make_task(doing, "scratch", is_ephemeral=True)
        with pytest.raises(WipLimitReached):
            admission.task_make_permanent(task=scratch, actor=owner)
        scratch.refresh_from_db()
        assert scratch.is_ephemeral

    def test_delete_keeps_a_deleted_event(self, board, make_task, owner):
        backlog, _, _ = board
        task = make_task(backlog, "gone")
        admission.task_delete(task=task, actor=owner)
        assert not Task.objects.filter(pk=task.pk).exists()
        assert TaskEvent.objects.get(task_id=task.pk, kind=EventKind.DELETED).detail["title"] == "gone"


class TestOverride:
    def test_an_owner_may_force_with_a_reason_and_it_is_recorded(self, board, make_task, owner):
        backlog, doing, _ = board
        make_task(doing, "a")
        make_task(doing, "b")
        task = make_task(backlog, "hotfix")
        result = admission.task_move(task=task, to_step=doing, actor=owner, force=True, reason="prod down")
        assert result.outcome == admission.Outcome.FORCED
        event = TaskEvent.objects.get(task_id=task.pk, kind=EventKind.FORCED)
        assert (event.actor, event.reason, event.to_step) == (owner, "prod down", doing)
        assert Task.objects.occupying().filter(step=doing).count() == 3

    def test_a_member_may_not_force(self, board, make_task):
        _, doing, _ = board
        member = UserFactory()
        MembershipFactory(workspace=doing.workflow.workspace, user=member, role=Role.MEMBER)
        with pytest.raises(Forbidden):
            admission.task_create(workflow=doing.workflow, step=doing, actor=member, title="x", force=True, reason="r")

    def test_force_needs_a_reason(self, board, owner):
        _, doing, _ = board
        with pytest.raises(Invalid):
            admission.task_create(workflow=doing.workflow, step=doing, actor=owner, title="x", force=True)


class TestQueueMode:
    def test_a_full_queue_mode_step_queues_and_promotes_oldest_first(self, board, make_task, owner):
        backlog, doing, done = board
        doing.on_full = OnFull.QUEUE
        doing.save()
        a, _ = make_task(doing, "a"), make_task(doing, "b")
        q1 = admission.task_create(workflow=doing.workflow, step=doing, actor=owner, title="q1")
        q2 = admission.task_create(workflow=doing.workflow, step=doing, actor=owner, title="q2")
        make_task(backlog, "feeder task")
        assert q1.queued and q2.queued
        assert live_titles(doing) == ["a", "b"]
        admission.task_move(task=a, to_step=done, actor=owner)
        assert live_titles(doing) == ["b", "q1"]
        assert Task.objects.queued().filter(step=doing).get().title == "q2"
        assert Task.objects.filter(step=backlog).count() == 1
