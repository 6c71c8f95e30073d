"""The step-event engine: runs a step's `on_enter`, `on_turn_complete` and `on_exit` actions.

It works on the board change in progress (boards.change.BoardChange): `on_enter` runs when
the admission service sends `task_admitted`, `on_turn_complete` when an agent session's
turn completes (agents.services), `on_exit` when the engine itself moves a task out of a
step. Transitions go through the admission service (`boards.admission.move`) inside the
caller's transaction. A transition refused by a full step is deferred work, not a failure:
the change's savepoint undoes what it had done (the source step's `on_exit` effects included), the
task stays where it is, and a `deferred` event on the task's history says why.
"""

import logging
import uuid
from collections.abc import Callable
from contextvars import ContextVar

from django.dispatch import receiver

from boards import admission
from boards.change import BoardChange
from boards.models import EventKind, Task
from boards.signals import task_admitted
from common.errors import WipLimitReached
from workflows.models import WorkflowStep

logger = logging.getLogger(__name__)

# A chain of on_enter moves (A moves to B, whose on_enter moves on...) stops this deep,
# so a misconfigured loop (move_to_next / move_to_previous ping-pong) cannot run away.
MAX_CHAIN_DEPTH = 8
_depth: ContextVar[int] = ContextVar("engine_chain_depth", default=0)

MOVES = {"move_to_next", "move_to_previous", "move_to_step"}

# Actions other apps provide (agents: auto_start_agent), registered in their AppConfig.ready()
# so the engine never imports them. Each is called as action(change, task=..., step=...).
ACTIONS: dict[str, Callable] = {}


def register_action(kind: str, action: Callable) -> None:
    ACTIONS[kind] = action


@receiver(task_admitted)
def run_on_enter(sender, *, change: BoardChange, task: Task, step: WorkflowStep, **kwargs):
    run(change, task, step, "on_enter")


def turn_completed(change: BoardChange, task: Task, step: WorkflowStep) -> None:
    """An agent finished its turn on `task` in `step`: run the step's on_turn_complete actions."""
    run(change, task, step, "on_turn_complete")


def run(change: BoardChange, task: Task, step: WorkflowStep, event: str) -> None:
    for action in step.actions(event):
        if task.step_id != step.pk or task.archived_at is not None:
            return  # an earlier action moved the task on: the rest belonged to this step
        kind = action.get("type")
        if kind in ACTIONS:
            ACTIONS[kind](change, task=task, step=step)
        elif kind in MOVES:
            target = _target(change, step, action)
            if target is not None:
                transition(change, task, step, target, cause=f"{event}:{kind}")


def _target(change: BoardChange, step: WorkflowStep, action: dict) -> WorkflowStep | None:
    """The step an action names; None at either end of the board or for a deleted target."""
    if action["type"] == "move_to_step":
        try:
            return change.steps.get(uuid.UUID(str((action.get("config") or {}).get("step_id"))))
        except ValueError:
            return None
    ordered = sorted(change.steps.values(), key=lambda s: s.position)
    index = ordered.index(step) + (1 if action["type"] == "move_to_next" else -1)
    return ordered[index] if 0 <= index < len(ordered) else None


def transition(change: BoardChange, task: Task, source: WorkflowStep, target: WorkflowStep, *, cause: str) -> bool:
    """Move `task` from `source` to `target` as the engine; False when refused (recorded)."""
    depth = _depth.get()
    if depth >= MAX_CHAIN_DEPTH:
        change.record.event(
            task,
            EventKind.DEFERRED,
            from_step=source,
            to_step=target,
            action=cause,
            refusal={
                "code": "chain_too_long",
                "detail": f"Stopped after {MAX_CHAIN_DEPTH} chained moves.",
            },
        )
        return False
    token = _depth.set(depth + 1)
    try:
        with change.savepoint():
            _run_on_exit(change, task, source)
            admission.move(change, task, target, reason=f"step event {cause}")
    except WipLimitReached as refused:
        task.refresh_from_db()
        change.record.event(
            task,
            EventKind.DEFERRED,
            from_step=source,
            to_step=target,
            action=cause,
            refusal=refused.as_body(),
        )
        logger.info("engine deferred %s of task %s: %s", cause, task.pk, refused.detail)
        return False
    finally:
        _depth.reset(token)
    return True


def _run_on_exit(change: BoardChange, task: Task, source: WorkflowStep) -> None:
    # The task is already on its way to the transition's target, so exit actions that
    # would move it again are not run; their side effects (a session) are.
    for action in source.actions("on_exit"):
        if action.get("type") in ACTIONS:
            ACTIONS[action["type"]](change, task=task, step=source)
