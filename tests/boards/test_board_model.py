"""A property-based model of the board: random operations against the real
services, checked after every step against a small in-memory model of the rules."""

from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule, run_state_machine_as_test

from boards import admission, structure
from boards.links import link_create, link_delete
from boards.models import ClassOfService, Task, TaskLink
from boards.placement import key_after
from boards.services import task_block, task_unblock, task_update
from common.errors import Conflict, Invalid, WipLimitReached
from tests.boards.settling import unsettled
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows.models import Lane, LaneCell, OnFull, Role, StepGroup, StepKind

ACTIVE = {1, 2}  # the active steps; the group "Development" is the same two
DONE = 3  # the done step: a task there (or archived) blocks nothing
PERSON_LIMITS = [1, 2]
EXPEDITE_LANE = 0  # lanes in board order: 0 the expedite lane, 1 (the board's first) and 2


@dataclass
class ModelTask:
    step: int
    position: int
    priority: int
    seq: int
    archived: bool = False
    queued: int | None = None  # when it joined its step's overflow queue; None: admitted
    blocked: bool = False
    assignee: int | None = None  # an index of PERSON_LIMITS
    expedite: bool = False
    lane: int = 1


class BoardMachine(RuleBasedStateMachine):
    """Steps 0 (start, backlog, unlimited) -> 1 (active, limit 2, pulls from 0) -> 2 (active,
    limit 1, queue mode, pulls from 1) -> 3 (done, unlimited, pulls nothing); 1 and 2 form the
    group "Development" (limit 2 at first); two people with personal limits 1 and 2; an
    expedite allowance of 1; lanes 0 (the expedite lane), 1 (the board's first, limit 2 at
    first) and 2 (limit 1 in step 1 at first); tasks block tasks (links). After every
    operation the model settles the board."""

    def __init__(self):
        super().__init__()
        self.user = UserFactory()
        workflow = WorkflowFactory(expedite_limit=1)
        MembershipFactory(workspace=workflow.workspace, user=self.user, role=Role.OWNER)
        self.people = []
        for limit in PERSON_LIMITS:
            person = UserFactory()
            MembershipFactory(workspace=workflow.workspace, user=person, role=Role.MEMBER, wip_limit=limit)
            self.people.append(person)
        self.group = StepGroup.objects.create(workflow=workflow, name="Development", wip_limit=2)
        self.group_limit = 2
        s0 = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind=StepKind.BACKLOG)
        s1 = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=2, pull_from_step=s0, group=self.group)
        s2 = StepFactory(
            workflow=workflow,
            name="Review",
            position=2,
            wip_limit=1,
            pull_from_step=s1,
            on_full=OnFull.QUEUE,
            group=self.group,
        )
        s3 = StepFactory(workflow=workflow, name="Done", position=3, kind=StepKind.DONE)
        self.workflow = workflow
        self.steps = [s0, s1, s2, s3]
        first = workflow.lanes.get()
        first.position, first.wip_limit = 1, 2
        first.save()
        self.lanes = [
            Lane.objects.create(workflow=workflow, name="Expedite", position=0, is_expedite=True),
            first,
            Lane.objects.create(workflow=workflow, name="Product", position=2),
        ]
        LaneCell.objects.create(lane=self.lanes[2], step=s1, wip_limit=1)
        self.lane_limits = [0, 2, 0]
        self.cells = {(2, 1): 1}  # (lane, step) -> limit
        self.limits = [0, 2, 1, 0]
        self.queues = [False, False, True, False]
        self.links: set = set()  # (blocker id, dependent id)
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

    def blockers(self, pk) -> list:
        """The task's unfinished blockers: not archived, not in the done step."""
        found = [b for b, d in self.links if d == pk and not self.tasks[b].archived and self.tasks[b].step != DONE]
        return sorted(str(b) for b in found)

    def waits_for(self, pk, other) -> bool:
        """Is `pk` blocked by `other` through a chain of links?"""
        todo, seen = [pk], {pk}
        while todo:
            current = todo.pop()
            for b, d in self.links:
                if d == current and b not in seen:
                    if b == other:
                        return True
                    seen.add(b)
                    todo.append(b)
        return False

    def last(self, step):
        return max((t.position for _, t in self.live(step)), default=-1)

    def counted(self, where=ACTIVE, **match):
        return [
            t
            for t in self.tasks.values()
            if t.step in where
            and not t.archived
            and t.queued is None
            and all(getattr(t, k) == v for k, v in match.items())
        ]

    def full_limit(self, step, task, source=None, assigning=False, lane=None):
        """The first full limit an entry of `task` into `step` from `source` (in lane `lane`:
        None, its own) meets, or None: cell, step, lane, group, person."""
        if task.queued is not None:
            source = None  # a queued task held no place where it waited: it takes one on entry
        lane = task.lane if lane is None else lane
        same_lane = lane == task.lane
        if not assigning:
            cell = self.cells.get((lane, step), 0)
            if cell and not (source == step and same_lane) and len(self.counted({step}, lane=lane)) >= cell:
                return "cell"
            if self.limits[step] and source != step and len(self.order(step)) >= self.limits[step]:
                return "step"
            entering_lane = step in ACTIVE and not (source in ACTIVE and same_lane)
            if self.lane_limits[lane] and entering_lane and len(self.counted(lane=lane)) >= self.lane_limits[lane]:
                return "lane"
            if step in ACTIVE and source not in ACTIVE and len(self.counted()) >= self.group_limit:
                return "group"
        enters_active = step in ACTIVE and (assigning or source not in ACTIVE)
        if enters_active and task.assignee is not None:
            if len(self.counted(assignee=task.assignee)) >= PERSON_LIMITS[task.assignee]:
                return "person"
        return None

    def decide(self, step, task, source=None, assigning=False, lane=None):
        """ "admitted", "queued" or "refused", as decide() must (boards/placement.py)."""
        if self.full_limit(step, task, source, assigning, lane) is None:
            return "admitted"
        already = source in ACTIVE and task.queued is None and not task.archived and task.expedite
        if task.expedite and step in ACTIVE and len(self.counted(expedite=True)) - already < 1:
            return "admitted"
        return "queued" if self.queues[step] and not assigning else "refused"

    def place(self, step, outcome, position=None):
        """(position, queued) of a task entering `step`."""
        queued = self.next_seq() if outcome == "queued" else None
        return (key_after(self.last(step)) if position is None else position), queued

    def room(self, step, source=None):
        rooms = [self.limits[step] - len(self.order(step))] if self.limits[step] else []
        if step in ACTIVE and source not in ACTIVE:
            rooms.append(self.group_limit - len(self.counted()))
        return min(rooms) if rooms else None

    def take(self, step, source, candidates, free):
        taken = []
        for pk in candidates:
            if free is not None and len(taken) >= free:
                break
            task = self.tasks[pk]
            enters_active = step in ACTIVE and source not in ACTIVE
            if enters_active and task.assignee is not None:
                if len(self.counted(assignee=task.assignee)) >= PERSON_LIMITS[task.assignee]:
                    continue  # skipped for its assignee, never refused
            cell = self.cells.get((task.lane, step), 0)
            if cell and len(self.counted({step}, lane=task.lane)) >= cell:
                continue  # skipped for its cell
            lane_limit = self.lane_limits[task.lane]
            if enters_active and lane_limit and len(self.counted(lane=task.lane)) >= lane_limit:
                continue  # skipped for its lane
            taken.append(pk)
            if source is None:
                task.queued = None
            else:
                task.step, task.position = step, key_after(self.last(step))
        return taken

    def fill(self, step) -> bool:
        """Own queue first, oldest first; then the feeder in pull order; True if anything moved."""
        free = self.room(step)
        promoted = self.take(step, None, self.queue(step), free) if free is None or free > 0 else []
        if step not in self.feeder:
            return bool(promoted)
        feeder = self.feeder[step]
        free = self.room(step, feeder)
        if free is None or free <= 0:
            return bool(promoted)

        def pull_order(pk):
            t = self.tasks[pk]
            return (not t.expedite, t.lane, t.position, t.priority, t.seq)

        candidates = sorted(
            (pk for pk in self.order(feeder) if not self.tasks[pk].blocked and not self.blockers(pk)), key=pull_order
        )
        return bool(promoted or self.take(step, feeder, candidates, free))

    def settle(self):
        """Fill in board order until no step can admit anything more: pulls cascade up and
        down the chain; when a group gains room its steps fill in position order."""
        while any([self.fill(step) for step in range(len(self.steps))]):
            pass

    # --- operations ----------------------------------------------------------------------
    @rule(
        step=st.integers(0, 3),
        priority=st.integers(0, 4),
        position=st.none() | st.integers(0, 3),
        assignee=st.none() | st.integers(0, 1),
        expedite=st.booleans(),
        lane=st.integers(0, 2),
    )
    def create(self, step, priority, position, assignee, expedite, lane):
        model = ModelTask(step, 0, priority, 0, assignee=assignee, expedite=expedite, lane=lane)
        if lane == EXPEDITE_LANE and not expedite:
            if step in ACTIVE and len(self.counted(expedite=True)) >= 1:
                with pytest.raises(WipLimitReached):
                    admission.task_create(
                        workflow=self.workflow,
                        step=self.steps[step],
                        actor=self.user,
                        title="t",
                        lane_id=self.lanes[lane].pk,
                    )
                return
            model.expedite = True
        outcome = self.decide(step, model)
        fields = {
            "workflow": self.workflow,
            "step": self.steps[step],
            "actor": self.user,
            "title": "t",
            "priority": priority,
            "position": position,
            "assignee_id": None if assignee is None else self.people[assignee].pk,
            "class_of_service": ClassOfService.EXPEDITE if expedite else ClassOfService.STANDARD,
            "lane_id": self.lanes[lane].pk,
        }
        if outcome == "refused":
            with pytest.raises(WipLimitReached):
                admission.task_create(**fields)
            return
        task = admission.task_create(**fields).task
        model.position, model.queued = self.place(step, outcome, position)
        model.seq = self.next_seq()
        self.tasks[task.pk] = model
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), to=st.integers(0, 3))
    def move(self, data, to):
        pk = data.draw(st.sampled_from(list(self.tasks)))  # creation order: ids are random
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        if model.archived:
            with pytest.raises(Conflict):
                admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
            return
        if model.step == to:
            return  # the reorder rule's
        outcome = self.decide(to, model, source=model.step)
        if outcome == "refused":
            with pytest.raises(WipLimitReached):
                admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
            return
        admission.task_move(task=task, to_step=self.steps[to], actor=self.user)
        model.step, (model.position, model.queued) = to, self.place(to, outcome)
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), to=st.integers(0, 2), lane=st.integers(0, 2))
    def move_to_lane(self, data, to, lane):
        """Into another lane (and maybe another step): the cell, the lane, the expedite lane."""
        pk = data.draw(st.sampled_from(list(self.tasks)))
        task, model = Task.objects.get(pk=pk), self.tasks[pk]

        def send():
            return admission.task_move(task=task, to_step=self.steps[to], actor=self.user, lane_id=self.lanes[lane].pk)

        if model.archived or model.lane == lane:
            return  # the other rules'
        expedite = model.expedite
        if lane == EXPEDITE_LANE and not expedite:
            if to in ACTIVE and len(self.counted(expedite=True)) >= 1:
                with pytest.raises(WipLimitReached):
                    send()
                return
            expedite = True
        elif model.lane == EXPEDITE_LANE:
            expedite = False
        judged = ModelTask(**{**model.__dict__, "expedite": expedite})
        outcome = self.decide(to, judged, source=model.step, lane=lane)
        if outcome == "refused":
            with pytest.raises(WipLimitReached):
                send()
            return
        send()
        if model.expedite and not expedite:
            self.lowered.add(model.step)  # it may have been admitted past a limit as expedite work
        same_step = to == model.step
        position, queued = self.place(to, outcome)
        model.step, model.lane, model.expedite, model.queued = to, lane, expedite, queued
        if not same_step:
            model.position = position
        self.settle()

    @rule(lane=st.integers(1, 2), limit=st.integers(0, 3))
    def set_lane_limit(self, lane, limit):
        structure.lane_update(lane=self.lanes[lane], actor=self.user, wip_limit=limit)
        self.lane_limits[lane] = limit
        self.settle()

    @rule(lane=st.integers(1, 2), step=st.integers(0, 2), limit=st.integers(0, 2))
    def set_cell_limit(self, lane, step, limit):
        cells = [{"step_id": self.steps[s].pk, "wip_limit": n} for (c, s), n in self.cells.items() if c == lane]
        cells = [c for c in cells if c["step_id"] != self.steps[step].pk] + [
            {"step_id": self.steps[step].pk, "wip_limit": limit}
        ]
        structure.cells_set(lane=self.lanes[lane], actor=self.user, cells=cells)
        self.cells[lane, step] = limit
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
        elif (outcome := self.decide(model.step, model)) == "refused":
            with pytest.raises(WipLimitReached):
                admission.task_restore(task=task, actor=self.user)
            return
        else:
            admission.task_restore(task=task, actor=self.user)
            model.position, model.queued = self.place(model.step, outcome)  # placed while still archived
            model.archived = False
        self.settle()

    @rule(step=st.integers(1, 2), limit=st.integers(0, 4))
    def set_limit(self, step, limit):
        structure.step_update(step=self.steps[step], actor=self.user, wip_limit=limit)
        self.limits[step] = limit
        if limit and len(self.order(step)) > limit:
            self.lowered.add(step)
        self.settle()

    @rule(step=st.integers(1, 2), pulls=st.booleans())
    def set_feeder(self, step, pulls):
        feeder = self.steps[step - 1].pk if pulls else None
        structure.step_update(step=self.steps[step], actor=self.user, pull_from_step_id=feeder)
        if pulls:
            self.feeder[step] = step - 1
        else:
            self.feeder.pop(step, None)
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data())
    def block_or_unblock(self, data):
        pk = data.draw(st.sampled_from(list(self.tasks)))
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        if model.archived:
            return
        if model.blocked:
            task_unblock(task=task, actor=self.user)
        else:
            task_block(task=task, actor=self.user, reason="waiting on ops")
        model.blocked = not model.blocked
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data(), assignee=st.none() | st.integers(0, 1))
    def assign(self, data, assignee):
        pk = data.draw(st.sampled_from(list(self.tasks)))
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        if model.assignee == assignee:
            return
        reassigned = ModelTask(**{**model.__dict__, "assignee": assignee})
        counted = model.step in ACTIVE and not model.archived and model.queued is None
        person = None if assignee is None else self.people[assignee].pk
        if counted and self.decide(model.step, reassigned, source=model.step, assigning=True) == "refused":
            with pytest.raises(WipLimitReached):
                task_update(task=task, actor=self.user, assignee_id=person)
            return
        task_update(task=task, actor=self.user, assignee_id=person)
        model.assignee = assignee
        self.settle()

    @precondition(lambda self: self.tasks)
    @rule(data=st.data())
    def toggle_expedite(self, data):
        pk = data.draw(st.sampled_from(list(self.tasks)))
        task, model = Task.objects.get(pk=pk), self.tasks[pk]
        value = ClassOfService.STANDARD if model.expedite else ClassOfService.EXPEDITE
        counted = model.step in ACTIVE and not model.archived and model.queued is None
        if not model.expedite and counted and len(self.counted(expedite=True)) >= 1:
            with pytest.raises(WipLimitReached):
                task_update(task=task, actor=self.user, class_of_service=value)
            return
        task_update(task=task, actor=self.user, class_of_service=value)
        if model.expedite and counted:
            self.lowered.add(model.step)  # it may have been admitted past the limit as expedite work
        model.expedite = not model.expedite
        self.settle()

    @precondition(lambda self: len(self.tasks) >= 2)
    @rule(data=st.data())
    def link(self, data):
        blocker, dependent = data.draw(st.lists(st.sampled_from(list(self.tasks)), min_size=2, max_size=2, unique=True))
        call = {"blocker": Task.objects.get(pk=blocker), "dependent": Task.objects.get(pk=dependent)}
        if (blocker, dependent) in self.links or self.waits_for(blocker, dependent):
            with pytest.raises(Invalid):
                link_create(**call, actor=self.user, field="blocks_task_id")
            return
        link_create(**call, actor=self.user, field="blocks_task_id")
        self.links.add((blocker, dependent))
        self.settle()

    @precondition(lambda self: self.links)
    @rule(data=st.data())
    def unlink(self, data):
        blocker, dependent = data.draw(st.sampled_from(sorted(self.links, key=str)))
        link_delete(
            link=TaskLink.objects.select_related("dependent").get(blocker=blocker, dependent=dependent), actor=self.user
        )
        self.links.discard((blocker, dependent))
        self.settle()

    def describe(self) -> str:
        """The model beside the database, task by task: what a failure message needs (the
        run does not shrink: shrinking a machine that writes to a database takes minutes)."""
        step_index = {s.pk: i for i, s in enumerate(self.steps)}
        lines = [
            f"group limit {self.group_limit}, step limits {self.limits}, feeders {self.feeder},"
            f" lane limits {self.lane_limits}, cells {self.cells}"
        ]
        lane_index = {lane.pk: i for i, lane in enumerate(self.lanes)}
        for n, (pk, model) in enumerate(self.tasks.items()):
            real = Task.objects.get(pk=pk)
            lines.append(
                f"T{n} model {model} | real step {step_index[real.step_id]} admitted={real.admitted}"
                f" position={real.position} {real.class_of_service} assignee={real.assignee_id}"
                f" blocked={bool(real.blocked_reason)} archived={real.archived_at is not None}"
                f" lane={lane_index[real.lane_id]}"
                f" blocked_by={real.blocked_by}"
            )
        lines += [f"link {list(self.tasks).index(b)} blocks {list(self.tasks).index(d)}" for b, d in self.links]
        return "\n".join(lines)

    # --- checked after every step --------------------------------------------------------
    @invariant()
    def board_matches_the_model(self):
        for i, step in enumerate(self.steps):
            live = Task.objects.filter(step=step, archived_at__isnull=True, is_ephemeral=False)
            admitted = live.filter(admitted=True).order_by("position", "priority", "created_at", "id")
            real = list(admitted.values_list("id", flat=True))
            assert real == self.order(i), self.describe()
            lanes = dict(live.values_list("id", "lane_id"))
            assert all(lanes[pk] == self.lanes[self.tasks[pk].lane].pk for pk in lanes), self.describe()
            queued = live.filter(admitted=False).order_by("queued_at", "position", "id")
            assert list(queued.values_list("id", flat=True)) == self.queue(i), self.describe()
            expedited = sum(1 for pk in real if self.tasks[pk].expedite)
            if self.limits[i] and i not in self.lowered:
                assert len(real) <= self.limits[i] + expedited  # expedite work may pass a limit

    @invariant()
    def blocked_by_is_the_unfinished_blockers(self):
        for pk, blocked_by in Task.objects.filter(workflow=self.workflow).values_list("pk", "blocked_by"):
            assert blocked_by == self.blockers(pk), self.describe()

    @invariant()
    def board_is_settled(self):
        assert unsettled(self.workflow) == [], self.describe()


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
            phases=[Phase.explicit, Phase.reuse, Phase.generate],  # no shrinking: see describe()
        ),
    )
