"""Why a task waits: the answer the task detail and the board give.

A queued task waits for room in its step (and group, and its assignee's limit); a feeder
task waits to be pulled by the first limited step that pulls from its step. `position` is
1-based in the order in which it would be admitted there; `held_by` lists the limits that
are full now, named as a refusal names them; `skipped_because` says why a pull would pass
it over (for "dependency", `blocked_by` names the unfinished blockers: `{"id", "title",
"workflow_id"}`). The limits come from `boards.limits.limits()`, the rule admissions use.
"""

import bisect
import operator
from typing import NamedTuple

from boards.change import BoardView, board_view
from boards.dependencies import blockers_named
from boards.limits import held, limited_for, limits
from boards.models import ClassOfService, Task
from boards.pullable import barred, card_pullable, with_bars
from workflows.models import WorkflowStep


def task_waiting(task: Task) -> dict | None:
    """The task detail's `waiting`: null, or state, position, step, held_by, skipped_because.
    Read `task` and its waiting in one `common.db.one_read()`: its step may be gone since."""
    if task.archived_at is not None or task.is_ephemeral:
        return None
    view = board_view(task.workflow)
    step = view.steps[task.step_id]
    if not task.admitted:
        queue = Task.objects.queued().filter(step=step).order_by("queued_at", "position", "id")
        queue = list(queue.values_list("pk", flat=True))
        full = [limit for limit in limits(view, step, task) if not limit.allowance and limit.full]
        own = next((limit for limit in full if limit.of_task), None)
        return _waiting("queued", queue.index(task.pk) + 1, step, full, SKIPPED_FOR.get(own and own.scope))
    consumer = _consumer(view, step)
    if consumer is None:
        return None
    candidates = list(with_bars(Task.objects.occupying().filter(step=step)).in_pull_order())
    view.occupancy.lock_members({t.assignee_id for t in candidates})
    ahead = 0
    for candidate in candidates:
        skipped = _skipped(view, consumer, step, candidate)
        if candidate.pk == task.pk:
            full = [limit for limit in limits(view, consumer, task, source=step) if not limit.allowance and limit.full]
            waiting = _waiting("waiting_for_pull", ahead + 1, consumer, full, skipped)
            if skipped == "dependency":
                waiting["blocked_by"] = blockers_named(task)
            return waiting
        if skipped is None:
            ahead += 1
    return None


def _consumer(view: BoardView, feeder: WorkflowStep) -> WorkflowStep | None:
    """The first step (in board order) that pulls from `feeder` and is limited for it."""
    pulling = sorted((s for s in view.steps.values() if s.pull_from_step_id == feeder.pk), key=lambda s: s.position)
    return next((s for s in pulling if limited_for(s.wip_limit, s.group_id, feeder.group_id)), None)


def _skipped(view, consumer, feeder, task) -> str | None:
    if word := barred(task):
        return word
    limit = held(view, consumer, task, source=feeder)
    return None if limit is None else SKIPPED_FOR[limit.scope]


# The word for a task passed over because its own limit is full.
SKIPPED_FOR = {"person": "assignee_full", "cell": "cell_full", "lane": "lane_full"}


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


class Orders(NamedTuple):
    """The indices, in a column, of its queued cards in queue order, and of the cards a pull
    could take, expedite and standard, in board order: what the column's waiting comes from."""

    queue: list[int]
    expedite: list[int]
    standard: list[int]


class Column(list):
    """A column of a board snapshot: its cards in board order, and the `Orders` they were
    last given waiting from (None until then). A later state of the column that begins with
    the same cards takes their part of the orders instead of going over every card again: in
    Python, a pass over a 1,000-card column costs more than the rest of a change."""

    orders: Orders | None = None


def board_waiting(board: dict, *, unchanged_from: dict | None = None) -> dict:
    """The cards' `waiting` on the board (`null` or `{"state", "position"}`) from the snapshot
    alone, by step id: ({index in the column: waiting}, the column's `Orders`). It is the
    queue's order, and each limited consumer's pull order over its feeder's tasks that are
    a pull may take (`boards.pullable`; a person's limit spans boards, so the board leaves
    it to the task detail).

    A task's waiting depends only on its own column and on whether a limited step pulls from
    it. With `unchanged_from` (an earlier snapshot that `board` shares columns and cards
    with), a column it shares, with the same answer to that, is left out: its waiting stands;
    a changed column is computed from its first changed card on where it can be
    (`column_waiting`). Without it, every card of every column is there."""
    consumers = board_consumers(board)
    ranks = {lane["id"]: lane["position"] for lane in board.get("lanes", ())}
    if len(ranks) < 2:
        ranks = None  # one lane: the pull order is the column's, expedite first
    else:
        unchanged_from = None  # across lanes, every column's pull order is sorted again
    if unchanged_from is None:
        before, pulled_before = {}, set()
    else:
        before = {step["id"]: step["tasks"] for step in unchanged_from["steps"]}
        pulled_before = set(board_consumers(unchanged_from))
    waiting = {}
    for step in board["steps"]:
        tasks, pulled = step["tasks"], step["id"] in consumers
        old = before.get(step["id"])
        if pulled != (step["id"] in pulled_before):
            old = None  # every card's waiting changes
        elif old is tasks:
            continue
        waiting[step["id"]] = column_waiting(tasks, pulled=pulled, before=old, lane_ranks=ranks)
    return waiting


def _same_cards(a: list, b: list) -> bool:
    """Whether two runs of cards are the same objects, compared at C speed."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


def common_start(old: list, new: list) -> int:
    """How many cards `new` begins with that are `old`'s first: a binary search over slices."""
    low, high = 0, min(len(old), len(new))
    while low < high:
        middle = (low + high + 1) // 2
        if _same_cards(old[low:middle], new[low:middle]):
            low = middle
        else:
            high = middle - 1
    return low


def common_end(old: list, new: list, *, at_most: int) -> int:
    """How many cards, up to `at_most`, `new` ends with that are `old`'s last."""
    low, high = 0, at_most
    while low < high:
        middle = (low + high + 1) // 2
        if _same_cards(old[len(old) - middle : len(old) - low], new[len(new) - middle : len(new) - low]):
            low = middle
        else:
            high = middle - 1
    return low


def column_waiting(
    tasks: list[dict], *, pulled: bool, before: list | None = None, lane_ranks: dict | None = None
) -> tuple[dict, Orders]:
    """({index: waiting}, `Orders`) of one column; `pulled`: a limited step pulls from it.
    `lane_ranks` ({lane id: position}, on a board of several lanes): the pull takes each
    class's cards in lane order, then board order.

    `before`: the column's state before, pulled as it is now. The cards the column begins and
    ends with as it did keep their part of its orders, and the first ones, unless it changed,
    their waiting: only the cards between them are gone over, and the result leaves out
    those whose waiting stands. The queue (usually short) is ordered whole, and a kept
    standard card's position moves when the expedite cards (pulled first) are not as many
    as before. A card keeps its own `waiting` object when it is unchanged, so that the card
    itself can stay as it is."""
    known = getattr(before, "orders", None)
    start = common_start(before, tasks) if known is not None else 0
    end = common_end(before, tasks, at_most=min(len(before), len(tasks)) - start) if known is not None else 0
    middle = Orders([], [], [])
    for i in range(start, len(tasks) - end):
        t = tasks[i]
        if not t["admitted"]:
            middle.queue.append(i)
        elif card_pullable(t):
            (middle.expedite if t["class_of_service"] == ClassOfService.EXPEDITE else middle.standard).append(i)
    if known is not None:
        old_end, shift = len(before) - end, len(tasks) - len(before)
        orders = Orders(
            [i for i in known.queue if i < start] + middle.queue + [i + shift for i in known.queue if i >= old_end],
            _spliced(known.expedite, middle.expedite, start, old_end, shift),
            _spliced(known.standard, middle.standard, start, old_end, shift),
        )
    else:
        orders = middle
    orders.queue.sort(key=lambda i: (tasks[i]["queued_at"], tasks[i]["position"], tasks[i]["id"]))
    if lane_ranks is not None:
        for order in (orders.expedite, orders.standard):
            order.sort(key=lambda i: (lane_ranks.get(tasks[i]["lane_id"], 0), i))
    assigned = [("queued", orders.queue, 1)]
    if pulled:
        # A column is in board order; the pull order (`in_pull_order`) only puts expedite first.
        expedite_kept = bisect.bisect_left(orders.expedite, start)
        standard_kept = bisect.bisect_left(orders.standard, start)
        if standard_kept and len(orders.expedite) != len(known.expedite):
            standard_kept = 0  # every standard card moves
        assigned.append(("waiting_for_pull", orders.expedite[expedite_kept:], 1 + expedite_kept))
        first_standard = len(orders.expedite) + 1 + standard_kept
        assigned.append(("waiting_for_pull", orders.standard[standard_kept:], first_standard))
    waiting = dict.fromkeys(range(start, len(tasks) - end))
    for state, order, first_position in assigned:
        for position, i in enumerate(order, first_position):
            current = tasks[i].get("waiting")
            if current is None or current["position"] != position or current["state"] != state:
                current = {"state": state, "position": position}
            waiting[i] = current
    return waiting, orders


def _spliced(old: list[int], middle: list[int], start: int, old_end: int, shift: int) -> list[int]:
    """An order (card indices, ascending) of a column whose cards before `start` and from
    `old_end` on (`shift` further in the column now) are as they were, around `middle`'s."""
    head = old[: bisect.bisect_left(old, start)]
    return head + middle + [i + shift for i in old[bisect.bisect_left(old, old_end) :]]


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
