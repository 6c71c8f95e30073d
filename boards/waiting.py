"""Why a task waits (product.md §2b.6): the answer the task detail and the board give.

A queued task waits for room in its step (and group, and its assignee's limit); a feeder
task waits to be pulled by the first limited step that pulls from its step. `position` is
1-based in the order in which it would be admitted there; `held_by` lists the limits that
are full now, named as a refusal names them; `skipped_because` says why a pull would pass
it over. The limits come from `placement.limits()`, the rule admissions use.
"""

import bisect

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
    """The cards' `waiting` on the board (`null` or `{"state", "position"}`) from the snapshot
    alone, by step id: {index in the column: waiting}. It is the queue's order, and each
    limited consumer's pull order over its feeder's tasks that are not blocked and have no
    agent at work (a person's limit spans boards, so the board leaves it to the task detail).

    A task's waiting depends only on its own column and on whether a limited step pulls from
    it. With `unchanged_from` (an earlier snapshot that `board` shares columns and cards
    with), a column it shares, with the same answer to that, is left out: its waiting stands;
    and of a changed column, the cards it begins with as before are left out when their
    waiting stands (`column_waiting`). Without it, every card of every column is there."""
    consumers = board_consumers(board)
    if unchanged_from is None:
        before, pulled_before = {}, set()
    else:
        before = {step["id"]: step["tasks"] for step in unchanged_from["steps"]}
        pulled_before = set(board_consumers(unchanged_from))
    waiting = {}
    for step in board["steps"]:
        tasks, pulled = step["tasks"], step["id"] in consumers
        same_pull = pulled == (step["id"] in pulled_before)
        old = before.get(step["id"])
        if old is tasks and same_pull:
            continue
        kept = _common_start(old, tasks) if old is not None and same_pull else 0
        waiting[step["id"]] = column_waiting(tasks, pulled=pulled, kept=kept)
    return waiting


def _common_start(old: list, new: list) -> int:
    """How many cards `new` begins with as `old` does: a binary search over slices, which
    compare by identity first, at C speed (a loop in Python over a 1,000-card column costs
    more than the rest of a change). An equal card that is another object counts as the
    same: its waiting is computed from what it holds."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if old[low:middle] == new[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def column_waiting(tasks: list[dict], *, pulled: bool, kept: int = 0) -> dict:
    """{index: waiting} of one column's cards; `pulled`: a limited step pulls from it.

    The first `kept` cards are the column's first before, and so was whether it is pulled:
    they are left out unless their waiting may have changed. The queue (usually short) is
    always ordered whole. A kept card's pull position stands while the expedite cards, which
    all come first, are as many as before. A card keeps its own `waiting` object when it is
    unchanged, so that the card itself can stay as it is."""
    waiting = {}
    queue = sorted(
        (i for i, t in enumerate(tasks) if not t["admitted"]),
        key=lambda i: (tasks[i]["queued_at"], tasks[i]["position"], tasks[i]["id"]),
    )
    orders = [("queued", queue, 1)]
    if pulled:
        # A column is in board order; the pull order (`in_pull_order`) only puts expedite first.
        expedite, standard = [], []
        for i, t in enumerate(tasks):
            if t["admitted"] and not t["is_ephemeral"] and not t["blocked_reason"]:
                session = t.get("session")
                if session is None or session["status"] not in HOLDING_SLOT:
                    (expedite if t["class_of_service"] == ClassOfService.EXPEDITE else standard).append(i)
        if standard and standard[0] < kept:
            first = tasks[standard[0]].get("waiting")  # as it was: E expedite cards before it, E + 1
            if first is None or first["position"] != len(expedite) + 1:
                kept = 0
        for order, first_position in ((expedite, 1), (standard, len(expedite) + 1)):
            start = bisect.bisect_left(order, kept)
            orders.append(("waiting_for_pull", order[start:], first_position + start))
    for i in range(kept, len(tasks)):
        waiting[i] = None
    for state, order, first_position in orders:
        for position, i in enumerate(order, first_position):
            current = tasks[i].get("waiting")
            if current is None or current["position"] != position or current["state"] != state:
                current = {"state": state, "position": position}
            waiting[i] = current
    return waiting


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
