"""Why a task waits (product.md §2b.6): the answer the task detail and the board give.

A queued task waits for room in its step (and group, and its assignee's limit); a feeder
task waits to be pulled by the first limited step that pulls from its step. `position` is
1-based in the order in which it would be admitted there; `held_by` lists the limits that
are full now, named as a refusal names them; `skipped_because` says why a pull would pass
it over. The limits come from `placement.limits()`, the rule admissions use.
"""

from agents.models import HOLDING_SLOT
from boards.locking import BoardChange, board_view
from boards.models import ClassOfService, Task
from boards.placement import assignee_full, limited_for, limits
from workflows.models import WorkflowStep


def task_waiting(task: Task) -> dict | None:
    """The task detail's `waiting`: null, or state, position, step, held_by, skipped_because.
    Read `task` and its waiting in one `kandev.db.one_read()`: its step may be gone since."""
    if task.archived_at is not None or task.is_ephemeral:
        return None
    view = board_view(task.workflow)
    step = view.steps[task.step_id]
    if not task.admitted:
        queue = Task.objects.queued().filter(step=step).order_by("queued_at", "position", "id")
        queue = list(queue.values_list("pk", flat=True))
        full = [limit for limit in limits(view, step, task) if limit.full]
        person_full = any(limit.scope == "person" for limit in full)
        return _waiting("queued", queue.index(task.pk) + 1, step, full, "assignee_full" if person_full else None)
    consumer = _consumer(view, step)
    if consumer is None:
        return None
    candidates = list(Task.objects.occupying().filter(step=step).in_pull_order())
    running = set(Task.objects.filter(step=step, agent_sessions__status__in=HOLDING_SLOT).values_list("pk", flat=True))
    view.lock_members({t.assignee_id for t in candidates})
    ahead = 0
    for candidate in candidates:
        skipped = _skipped(view, consumer, step, candidate, running)
        if candidate.pk == task.pk:
            full = [limit for limit in limits(view, consumer, task, source=step) if limit.full]
            return _waiting("waiting_for_pull", ahead + 1, consumer, full, skipped)
        if skipped is None:
            ahead += 1
    return None


def _consumer(view: BoardChange, feeder: WorkflowStep) -> WorkflowStep | None:
    """The first step (in board order) that pulls from `feeder` and is limited for it."""
    pulling = sorted((s for s in view.steps.values() if s.pull_from_step_id == feeder.pk), key=lambda s: s.position)
    return next((s for s in pulling if limited_for(s.wip_limit, s.group_id, feeder.group_id)), None)


def _skipped(view, consumer, feeder, task, running) -> str | None:
    if task.blocked_reason:
        return "blocked"
    if task.pk in running:
        return "agent_running"
    if assignee_full(view, consumer, task, source=feeder):
        return "assignee_full"
    return None


def _waiting(state, position, step, full, skipped) -> dict:
    return {
        "state": state,
        "position": position,
        "step": {"id": str(step.pk), "name": step.name},
        "held_by": [
            {
                "scope": limit.scope,
                "id": str(limit.id),
                "name": limit.name,
                "limit": limit.limit,
                "occupied": limit.occupied,
            }
            for limit in full
        ],
        "skipped_because": skipped,
    }


def board_waiting(board: dict, *, unchanged_from: dict | None = None) -> dict:
    """Each task's `waiting` on the board (`null` or `{"state", "position"}`), by step id and
    task id, from the snapshot alone: the queue's order, and each limited consumer's pull order
    over its feeder's tasks that are not blocked and have no agent at work (a person's limit
    spans boards, so the board leaves it to the task detail).

    A task's waiting depends only on its own column and on whether a limited step pulls from
    it, so with `unchanged_from` (an earlier snapshot that `board` shares columns with) a
    column it shares, with the same answer to that, is left out: its waiting stands."""
    consumers = board_consumers(board)
    if unchanged_from is None:
        shared, pulled_before = set(), set()
    else:
        shared = {id(step["tasks"]) for step in unchanged_from["steps"]}
        pulled_before = set(board_consumers(unchanged_from))
    return {
        step["id"]: column_waiting(step, pulled=step["id"] in consumers)
        for step in board["steps"]
        if id(step["tasks"]) not in shared or (step["id"] in consumers) != (step["id"] in pulled_before)
    }


def column_waiting(step: dict, *, pulled: bool) -> dict:
    """{task id: waiting} of one column; `pulled`: a limited step pulls from it."""
    waiting = dict.fromkeys((task["id"] for task in step["tasks"]), None)
    queue = sorted(
        (t for t in step["tasks"] if not t["admitted"]), key=lambda t: (t["queued_at"], t["position"], t["id"])
    )
    for position, task in enumerate(queue, 1):
        waiting[task["id"]] = _card_waiting(task, "queued", position)
    if pulled:
        # A column is in board order; the pull order (`in_pull_order`) only puts expedite first.
        pullable = [t for t in step["tasks"] if t["admitted"] and not t["is_ephemeral"] and _pullable(t)]
        candidates = [t for t in pullable if t["class_of_service"] == ClassOfService.EXPEDITE]
        candidates += [t for t in pullable if t["class_of_service"] != ClassOfService.EXPEDITE]
        for position, task in enumerate(candidates, 1):
            waiting[task["id"]] = _card_waiting(task, "waiting_for_pull", position)
    return waiting


def _card_waiting(task: dict, state: str, position: int) -> dict:
    """The card's own `waiting` when it is unchanged, so that an unchanged card stays as it is."""
    current = task.get("waiting")
    if current is not None and current["position"] == position and current["state"] == state:
        return current
    return {"state": state, "position": position}


def board_consumers(board: dict) -> dict:
    """{feeder step id: the step that pulls from it under a limit} over a board snapshot: the
    first step in board order that pulls from the feeder and is limited for it (`_consumer`)."""
    consumers = {}
    for feeder in board["steps"]:
        for step in board["steps"]:
            if step["pull_from_step_id"] == feeder["id"] and limited_for(
                step["wip_limit"], step.get("group_id"), feeder.get("group_id")
            ):
                consumers[feeder["id"]] = step
                break
    return consumers


def _pullable(task: dict) -> bool:
    session = task.get("session")
    return not task["blocked_reason"] and not (session and session["status"] in HOLDING_SLOT)
