"""A property-based model of the board (admission.md): random operations against the real
services, checked after every step against a small in-memory model of the rules."""

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from boards import admission
from boards.models import Task
from boards.placement import key_after
from kandev.errors import Conflict, WipLimitReached
from tests.boards.settling import unsettled
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows import services
from workflows.models import OnFull, Role


@dataclass
class ModelTask:
    step: int
    position: int
    priority: int
    seq: int
    archived: bool = False
    queued: int | None = None  # when it joined its step's overflow queue; None: admitted


class BoardMachine(RuleBasedStateMachine):
    """Steps 0 (start, unlimited) -> 1 (limit 2, pulls from 0) -> 2 (limit 1, queue mode,
    pulls from 1). After every operation the model settles the board (product.md §3)."""

    def __init__(self):
        super().__init__()
        self.user = UserFactory()
        workflow = WorkflowFactory()
        MembershipFactory(workspace=workflow.workspace, user=self.user, role=Role.OWNER)
        s0 = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
        s1 = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2, pull_from_step=s0)
        s2 = StepFactory(
            workflow=workflow, name="Review", position=2, wip_limit=1, pull_from_step=s1, on_full=OnFull.QUEUE
        )
        self.workflow = workflow
        self.steps = [s0, s1, s2]
        self.limits = [0, 2, 1]
        self.queues = [False, False, True]
        self.feeder = {1: 0, 2: 1}
        self.lowered = set()  # steps whose limit went below their occupancy
        self.tasks: dict = {}  # task id -> ModelTask
        self.seq = 0

    # --- the model's rules -------------------------------------------------------------
    def next_seq(self):
        self.seq += 1
        return self.seq

    def live(self, step):
        return [(pk, t) for pk, t in self.tasks.items() if t.step == step and not t.archived]

    def board_order(self, step, admitted_only=False):
        tasks = [kv for kv in self.live(step) if kv[1].queued is None or not admitted_only]
        return [pk for pk, t in sorted(tasks, key=lambda kv: (kv[1].position, kv[1].priority, kv[1].seq))]

    def order(self, step):
        return self.board_order(step, admitted_only=True)

    def queue(self, step):
        waiting = [kv for kv in self.live(step) if kv[1].queued is not None]
        return [pk for pk, t in sorted(waiting, key=lambda kv: (kv[1].queued, kv[1].position))]

    def last(self, step):
        return max((t.position for _, t in self.live(step)), default=-1)

    def full(self, step):
        return self.limits[step] > 0 and len(self.order(step)) >= self.limits[step]

    def refuses(self, step):
        return self.full(step) and not self.queues[step]

    def place(self, step, position=None):
        """(position, queued) of a task entering `step`: queued when the step is full (queue mode)."""
        queued = self.next_seq() if self.full(step) else None
        return (key_after(self.last(step)) if position is None else position), queued

    def fill(self, step) -> bool:
        """Own queue first, oldest first; then the feeder in pull order; True if anything moved."""
        free = self.limits[step] - len(self.order(step)) if self.limits[step] else None
        if free is not None and free <= 0:
            return False
        promoted = self.queue(step) if free is None else self.queue(step)[:free]
        for pk in promoted:
            self.tasks[pk].queued = None
        if free is None or step not in self.feeder:
            return bool(promoted)
        pulled = self.order(self.feeder[step])[: free - len(promoted)]
        for pk in pulled:
            self.tasks[pk].step, self.tasks[pk].position = step, key_after(self.last(step))
        return bool(promoted or pulled)

    def settle(self):
        """Fill until no step can admit anything more: pulls cascade up and down the chain."""
        while any([self.fill(step) for step in reversed(range(len(self.steps)))]):
            pass

    # --- operations ----------------------------------------------------------------------
    @rule(step=st.integers(0, 2), priority=st.integers(0, 4), position=st.none() | st.integers(0, 3))
    def create(self, step, priority, position):
        if self.refuses(step):
            with pytest.raises(WipLimitReached):
                admission.task_create(
                    workflow=self.workflow,
                    step=self.steps[step],
                    actor=self.user,
                    title="t",
                    priority=priority,
                    position=position,
                )
            return
        task = admission.task_create(
            workflow=self.workflow,
            step=self.steps[step],
            actor=self.user,
            title="t",
            priority=priority,
            position=position,
        ).task
        position, queued = self.place(step, position)
        self.tasks[task.pk] = ModelTask(step, position, priority, self.next_seq(), queued=queued)
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), to=st.integers(0, 2))
    def move(self, data, to):
        pk = data.draw(st.sampled_from(list(self.tasks)))  # creation order: ids are random
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        if model.archived:
            with pytest.raises(Conflict):
                admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
            return
        if model.step == to:
            return  # the reorder rule's
        if self.refuses(to):
            with pytest.raises(WipLimitReached):
                admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
            return
        admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
        model.step, (model.position, model.queued) = to, self.place(to)
        self.settle()

    @precondition(lambda self: any(not t.archived for t in self.tasks.values()))
    @rule(data=st.data(), index=st.none() | st.integers(0, 5))
    def reorder(self, data, index):
        """To an index of its step's order (queued tasks included): the others keep theirs.
        The keys are the server's to choose, so the model takes them from the board."""
        pk = data.draw(st.sampled_from([pk for pk, t in self.tasks.items() if not t.archived]))
        step = self.tasks[pk].step
        expected = [other for other in self.board_order(step) if other != pk]
        expected.insert(len(expected) if index is None else index, pk)
        admission.task_move(task=Task.objects.get(pk=pk), to_step=self.steps[step], actor=self.user, position=index)
        for other, key in Task.objects.filter(step=self.steps[step]).values_list("id", "position"):
            self.tasks[other].position = key
        assert self.board_order(step) == expected
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data())
    def archive_or_restore(self, data):
        pk = data.draw(st.sampled_from(list(self.tasks)))  # creation order: ids are random
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        if not model.archived:
            admission.task_archive(task=task, actor=self.user)
            model.archived = True
        elif self.refuses(model.step):
            with pytest.raises(WipLimitReached):
                admission.task_restore(task=task, actor=self.user)
            return
        else:
            admission.task_restore(task=task, actor=self.user)
            model.position, model.queued = self.place(model.step)  # placed while still archived
            model.archived = False
        self.settle()

    @rule(step=st.integers(1, 2), limit=st.integers(0, 4))
    def set_limit(self, step, limit):
        services.step_update(step=self.steps[step], actor=self.user, wip_limit=limit)
        self.limits[step] = limit
        if limit and len(self.order(step)) > limit:
            self.lowered.add(step)
        self.settle()

    @rule(step=st.integers(1, 2), pulls=st.booleans())
    def set_feeder(self, step, pulls):
        feeder = self.steps[step - 1].pk if pulls else None
        services.step_update(step=self.steps[step], actor=self.user, pull_from_step_id=feeder)
        if pulls:
            self.feeder[step] = step - 1
        else:
            self.feeder.pop(step, None)
        self.settle()

    # --- checked after every step --------------------------------------------------------
    @invariant()
    def board_matches_the_model(self):
        for i, step in enumerate(self.steps):
            live = Task.objects.filter(step=step, archived_at__isnull=True, is_ephemeral=False)
            admitted = live.filter(admitted=True).order_by("position", "priority", "created_at", "id")
            real = list(admitted.values_list("id", flat=True))
            assert real == self.order(i)
            queued = live.filter(admitted=False).order_by("queued_at", "position", "id")
            assert list(queued.values_list("id", flat=True)) == self.queue(i)
            if self.limits[i] and i not in self.lowered:
                assert len(real) <= self.limits[i]

    @invariant()
    def board_is_settled(self):
        assert unsettled(self.workflow) == []


@pytest.mark.django_db
def test_the_board_follows_its_rules_under_random_operations():
    run_state_machine_as_test(
        BoardMachine,
        settings=settings(
            max_examples=40,
            stateful_step_count=30,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow],
            derandomize=True,
        ),
    )
