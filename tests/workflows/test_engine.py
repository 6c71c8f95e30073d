"""The step-event engine: on_enter / on_turn_complete / on_exit actions through admission."""

from agents import services as sessions
from agents.models import AgentSession, SessionStatus
from boards import admission
from boards.models import EventKind, Task, TaskEvent
from boards.step_events import MAX_CHAIN_DEPTH
from tests.factories import StepFactory
from workflows.models import OnFull, Workflow

START = [{"type": "auto_start_agent"}]
NEXT = [{"type": "move_to_next"}]


def events(on_enter=(), on_turn_complete=(), on_exit=()):
    return {
        "on_enter": list(on_enter),
        "on_turn_complete": list(on_turn_complete),
        "on_exit": list(on_exit),
    }


def step_of(task):
    return Task.objects.get(pk=task.pk).step


def complete_turn(task):
    session = AgentSession.objects.get(task=task, status=SessionStatus.STARTING)
    sessions.session_event(session=session, type="boot_ready")
    return sessions.session_event(session=session, type="turn_completed")


class TestActions:
    def test_move_to_next_on_enter_passes_the_task_on(self, workflow, make_task):
        inbox = StepFactory(workflow=workflow, name="Inbox", position=0, events=events(on_enter=NEXT))
        triage = StepFactory(workflow=workflow, name="Triage", position=1)
        task = make_task(inbox, "a")
        assert step_of(task) == triage
        kinds = list(TaskEvent.objects.filter(task_id=task.pk).values_list("kind", flat=True))
        assert kinds == [EventKind.CREATED, EventKind.MOVED]

    def test_move_to_previous_and_move_to_step(self, workflow, make_task, owner):
        first = StepFactory(workflow=workflow, name="First", position=0)
        second = StepFactory(workflow=workflow, name="Second", position=1)
        StepFactory(
            workflow=workflow,
            name="Bounce",
            position=2,
            events=events(on_enter=[{"type": "move_to_previous"}]),
        )
        jump = StepFactory(
            workflow=workflow,
            name="Jump",
            position=3,
            events=events(on_enter=[{"type": "move_to_step", "config": {"step_id": str(first.pk)}}]),
        )
        bounced = make_task(first, "bounced")
        admission.task_move(task=bounced, to_step=workflow.steps.get(name="Bounce"), actor=owner)
        assert step_of(bounced) == second
        jumped = make_task(second, "jumped")
        admission.task_move(task=jumped, to_step=jump, actor=owner)
        assert step_of(jumped) == first

    def test_move_to_next_on_the_last_step_does_nothing(self, workflow, make_task):
        only = StepFactory(workflow=workflow, name="Only", position=0, events=events(on_enter=NEXT))
        assert step_of(make_task(only, "a")) == only

    def test_auto_start_agent_starts_a_session_on_create_move_and_pull(self, workflow, make_task, owner):
        backlog = StepFactory(workflow=workflow, name="Backlog", position=0)
        doing = StepFactory(
            workflow=workflow,
            name="Doing",
            position=1,
            wip_limit=1,
            pull_from_step=backlog,
            events=events(on_enter=START),
        )
        done = StepFactory(workflow=workflow, name="Done", position=2)
        created = make_task(doing, "created")
        waiting = make_task(backlog, "waiting")
        admission.task_move(task=created, to_step=done, actor=owner)  # opens room: pulls "waiting"
        moved = make_task(backlog, "moved")
        assert step_of(waiting) == doing
        assert AgentSession.objects.filter(task=created, step=doing).count() == 1
        assert AgentSession.objects.get(task=waiting).status == SessionStatus.STARTING
        assert not AgentSession.objects.filter(task=moved).exists()

    def test_auto_start_agent_fires_when_a_queued_task_is_promoted(self, workflow, make_task, owner):
        review = StepFactory(
            workflow=workflow,
            name="Review",
            position=0,
            wip_limit=1,
            on_full=OnFull.QUEUE,
            events=events(on_enter=START),
        )
        done = StepFactory(workflow=workflow, name="Done", position=1)
        first = make_task(review, "first")
        second = make_task(review, "second")
        assert not AgentSession.objects.filter(task=second).exists()
        admission.task_move(task=first, to_step=done, actor=owner)
        assert AgentSession.objects.get(task=second).status == SessionStatus.STARTING


class TestRefusedTransitions:
    def test_a_refused_on_enter_move_is_deferred_and_the_create_still_commits(self, workflow, make_task):
        inbox = StepFactory(workflow=workflow, name="Inbox", position=0, events=events(on_enter=NEXT))
        full = StepFactory(workflow=workflow, name="Full", position=1, wip_limit=1)
        make_task(full, "occupant")
        task = make_task(inbox, "a")
        assert step_of(task) == inbox
        deferred = TaskEvent.objects.get(task_id=task.pk, kind=EventKind.DEFERRED)
        assert (deferred.from_step, deferred.to_step) == (inbox, full)
        assert deferred.detail["refusal"]["code"] == "wip_limit_reached"
        assert deferred.detail["action"] == "on_enter:move_to_next"

    def test_a_refused_turn_complete_move_undoes_the_on_exit_effects(self, workflow, make_task):
        # given: an agent works in Build; leaving Build would start another agent (on_exit)
        build = StepFactory(
            workflow=workflow,
            name="Build",
            position=0,
            events=events(on_enter=START, on_turn_complete=NEXT, on_exit=START),
        )
        ship = StepFactory(workflow=workflow, name="Ship", position=1, wip_limit=1)
        make_task(ship, "occupant")
        task = make_task(build, "a")
        version = Workflow.objects.get(pk=workflow.pk).version
        # when: the turn completes but Ship is full
        session = complete_turn(task)
        # then: the session completed, the task stayed, no on_exit session survived
        assert session.status == SessionStatus.COMPLETED
        assert step_of(task) == build
        assert list(AgentSession.objects.filter(task=task).values_list("status", flat=True)) == [
            SessionStatus.COMPLETED
        ]
        assert TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.DEFERRED, to_step=ship).count() == 1
        assert not TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.MOVED).exists()
        # boot_ready (the card shows the agent running), then the turn: one version step each
        assert Workflow.objects.get(pk=workflow.pk).version == version + 2

    def test_an_accepted_transition_applies_the_on_exit_effects(self, workflow, make_task):
        build = StepFactory(
            workflow=workflow,
            name="Build",
            position=0,
            events=events(on_enter=START, on_turn_complete=NEXT, on_exit=START),
        )
        ship = StepFactory(workflow=workflow, name="Ship", position=1, wip_limit=1)
        task = make_task(build, "a")
        complete_turn(task)
        assert step_of(task) == ship
        statuses = list(AgentSession.objects.filter(task=task).values_list("step__name", "status"))
        assert statuses == [("Build", SessionStatus.COMPLETED), ("Build", SessionStatus.STARTING)]

    def test_a_move_loop_stops_at_the_depth_limit(self, workflow, make_task):
        ping = StepFactory(workflow=workflow, name="Ping", position=0, events=events(on_enter=NEXT))
        pong = StepFactory(
            workflow=workflow,
            name="Pong",
            position=1,
            events=events(on_enter=[{"type": "move_to_previous"}]),
        )
        task = make_task(ping, "ball")
        moves = TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.MOVED).count()
        assert moves == MAX_CHAIN_DEPTH
        stopped = TaskEvent.objects.get(task_id=task.pk, kind=EventKind.DEFERRED)
        assert stopped.detail["refusal"]["code"] == "chain_too_long"
        assert step_of(task) in (ping, pong)
