"""A property-based model of the board (admission.md): random operations against the real
services, checked after every step against a small in-memory model of the rules."""

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from boards import admission
from boards.models import Task
from kandev.errors import Conflict, WipLimitReached
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows import services
from workflows.models import Role


@dataclass
class ModelTask:
    step: int
    position: int
    priority: int
    seq: int
    archived: bool = False


class BoardMachine(RuleBasedStateMachine):
    """Steps 0 (start, unlimited) -> 1 (limit, pulls from 0) -> 2 (limit, pulls from 1)."""

    def __init__(self):
        super().__init__()
        self.user = UserFactory()
        workflow = WorkflowFactory()
        MembershipFactory(workspace=workflow.workspace, user=self.user, role=Role.OWNER)
        s0 = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
        s1 = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2, pull_from_step=s0)
        s2 = StepFactory(workflow=workflow, name="Review", position=2, wip_limit=1, pull_from_step=s1)
        self.workflow = workflow
        self.steps = [s0, s1, s2]
        self.limits = [0, 2, 1]
        self.feeder = {1: 0, 2: 1}
        self.lowered = set()  # steps whose limit went below their occupancy
        self.tasks: dict = {}  # task id -> ModelTask
        self.seq = 0

    # --- the model's rules -------------------------------------------------------------
    def live(self, step):
        return [(pk, t) for pk, t in self.tasks.items() if t.step == step and not t.archived]

    def order(self, step):
        return [pk for pk, t in sorted(self.live(step), key=lambda kv: (kv[1].position, kv[1].priority, kv[1].seq))]

    def last(self, step):
        return max((t.position for _, t in self.live(step)), default=-1)

    def full(self, step):
        return self.limits[step] > 0 and len(self.live(step)) >= self.limits[step]

    def fill(self, step, visited=None):
        visited = visited or set()
        if step in visited or self.limits[step] == 0 or step not in self.feeder:
            return
        visited.add(step)
        free = self.limits[step] - len(self.live(step))
        feeder = self.feeder[step]
        pulled = self.order(feeder)[: max(free, 0)]
        for pk in pulled:
            self.tasks[pk].step, self.tasks[pk].position = step, self.last(step) + 1
        if pulled:
            self.fill(feeder, visited)

    # --- operations ----------------------------------------------------------------------
    @rule(step=st.integers(0, 2), priority=st.integers(0, 4), position=st.none() | st.integers(0, 3))
    def create(self, step, priority, position):
        if self.full(step):
            with pytest.raises(WipLimitReached):
                admission.task_create(workflow=self.workflow, step=self.steps[step], actor=self.user, title="t",
                                      priority=priority, position=position)
            return
        task = admission.task_create(workflow=self.workflow, step=self.steps[step], actor=self.user, title="t",
                                     priority=priority, position=position).task
        self.seq += 1
        self.tasks[task.pk] = ModelTask(step, self.last(step) + 1 if position is None else position, priority, self.seq)

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
            return  # reordering is covered by the example-based tests
        if self.full(to):
            with pytest.raises(WipLimitReached):
                admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
            return
        admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
        source = model.step
        model.step, model.position = to, self.last(to) + 1
        self.fill(source)

    @precondition(lambda self: self.tasks)
    @rule(data=st.data())
    def archive_or_restore(self, data):
        pk = data.draw(st.sampled_from(list(self.tasks)))  # creation order: ids are random
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        if not model.archived:
            admission.task_archive(task=task, actor=self.user)
            model.archived = True
            self.fill(model.step)
        elif self.full(model.step):
            with pytest.raises(WipLimitReached):
                admission.task_restore(task=task, actor=self.user)
        else:
            admission.task_restore(task=task, actor=self.user)
            model.archived, model.position = False, self.last(model.step) + 1

    @rule(step=st.integers(1, 2), limit=st.integers(0, 4))
    def set_limit(self, step, limit):
        services.step_update(step=self.steps[step], actor=self.user, wip_limit=limit)
        self.limits[step] = limit
        if limit and len(self.live(step)) > limit:
            self.lowered.add(step)
        self.fill(step)

    # --- checked after every step --------------------------------------------------------
    @invariant()
    def board_matches_the_model(self):
        for i, step in enumerate(self.steps):
            real = list(Task.objects.occupying().filter(step=step).in_board_order().values_list("id", flat=True))
            assert real == self.order(i)
            if self.limits[i] and i not in self.lowered:
                assert len(real) <= self.limits[i]


@pytest.mark.django_db
def test_the_board_follows_its_rules_under_random_operations():
    run_state_machine_as_test(
        BoardMachine,
        settings=settings(
            max_examples=40, stateful_step_count=30, deadline=None,
            suppress_health_check=[HealthCheck.too_slow], derandomize=True,
        ),
    )
