"""The flow figures of one board, from its history.

The database aggregates (flow/queries.py); Python only accumulates rows already bounded
by the answer: points x steps, buckets, finished tasks, breaches.
"""

import math
import uuid
from datetime import datetime, timedelta

from django.db.models import Count, Min, OuterRef, Subquery
from django.utils import timezone

from boards.models import EventKind, Task, TaskEvent
from flow import config, queries
from flow.instants import EPOCH, Window, instant, us
from flow.kinds import ACTIVE, BACKLOG, DONE, BoardSteps
from workflows.models import Lane, LimitScope

INTERVALS = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}
PERCENTILES = (50, 85, 95)


def as_uuid(value):
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def percentile(ordered: list[float], p: float) -> float | None:
    """Linear interpolation between closest ranks (PostgreSQL's percentile_cont)."""
    if not ordered:
        return None
    rank = (len(ordered) - 1) * p / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def _percentiles(values: list[float]) -> dict:
    ordered = sorted(values)
    return {str(p): percentile(ordered, p) for p in PERCENTILES}


def _points(window: Window, interval: str) -> tuple[list, int]:
    """The instants from + k*interval before `to`, then `to`; and how many regular ones."""
    step = INTERVALS[interval]
    regular = math.ceil((window.end - window.start) / step)
    return [window.start + k * step for k in range(regular)] + [window.end], regular


def cfd(workflow, window: Window, interval: str, board: BoardSteps | None = None, lane_id=None) -> dict:
    """The cumulative flow: for each step in board order, the tasks that have arrived in it
    or a later step by each instant. The vertical distance between two lines is the work
    between them; the horizontal distance approximates the time it took. With a lane, of
    the tasks in it now."""
    board = board or BoardSteps.of(workflow)
    points, regular = _points(window, interval)
    lines = [s.pk for s in board.steps]
    arrived = {s.pk: [0] * len(points) for s in board.steps}
    if lines:
        rows = queries.cfd_arrivals(
            workflow.pk,
            lines=lines,
            done=board.ids(DONE),
            to=window.end,
            from_us=us(window.start),
            step_us=us(EPOCH + INTERVALS[interval]),
            last=regular,
            lane_id=lane_id,
        )
        for below, top, point, count in rows:
            for line in range(0 if below is None else below + 1, top + 1):
                arrived[lines[line]][int(point)] += count
        for series in arrived.values():
            for index in range(1, len(points)):
                series[index] += series[index - 1]
    return {
        "steps": [{"id": s.pk, "name": s.name, "kind": s.kind, "wip_limit": s.wip_limit} for s in board.steps],
        "points": [
            {"at": at, "arrived": {str(s.pk): arrived[s.pk][i] for s in board.steps}} for i, at in enumerate(points)
        ],
    }


def wip(workflow, window: Window, interval: str, board: BoardSteps | None = None, lane_id=None) -> dict:
    """Work in progress per step: the admitted and the queued tasks in each step at each
    instant, beside each step's own limit in force then (0: none). With a lane: of the
    tasks in it now, beside each of its cells' limit in force then."""
    board = board or BoardSteps.of(workflow)
    step = INTERVALS[interval]
    points, regular = _points(window, interval)
    counts = {s.pk: [0] * len(points) for s in board.steps}
    queued = {s.pk: [0] * len(points) for s in board.steps}
    rows = queries.cfd_deltas(
        workflow.pk,
        frm=window.start,
        to=window.end,
        from_us=us(window.start),
        step_us=us(EPOCH + step),
        last=regular,
        lane_id=lane_id,
    )
    deltas = {}
    for point, step_id, state, delta in rows:
        deltas.setdefault((as_uuid(step_id), state), {})[point] = delta
    for (step_id, state), by_point in deltas.items():
        series = (counts if state == queries.ADMITTED else queued).get(step_id)
        if series is None:  # a deleted step: the tasks it held are counted where they went
            continue
        total = 0
        for index in range(len(points)):
            total += by_point.get(index, 0)
            series[index] = total
    if lane_id is None:
        in_force = config.limits_in_window(workflow, window, LimitScope.STEP, {s.pk: s.wip_limit for s in board.steps})
    else:
        cells = config.cell_limits(workflow, window, Lane.objects.filter(pk=lane_id), board.steps)
        in_force = {step_id: series for (_, step_id), series in cells.items()}
    start = us(window.start)
    return {
        "steps": [{"id": s.pk, "name": s.name, "wip_limit": s.wip_limit} for s in board.steps],
        "points": [
            {
                "at": at,
                "counts": {str(s.pk): counts[s.pk][i] for s in board.steps},
                "queued": {str(s.pk): queued[s.pk][i] for s in board.steps},
                "limits": {str(s.pk): config.limit_at(in_force[s.pk], us(at) - start) for s in board.steps},
            }
            for i, at in enumerate(points)
        ],
    }


def cycle_items(
    workflow, window: Window, board: BoardSteps | None = None, lane_id=None, *, blocked: bool = False
) -> list[dict]:
    """The tasks first finished in the window, each with its cycle and lead time; with
    `blocked`, also the time it spent blocked inside its cycle (a query more and most of the
    work at a million events: only the cycle-time table and flow efficiency show it)."""
    board = board or BoardSteps.of(workflow)
    done = board.ids(DONE)
    if not done:
        return []
    rows = queries.finished_tasks(
        workflow.pk,
        done=done,
        not_active=board.ids(BACKLOG) + done,
        frm=window.start,
        to=window.end,
        lane_id=lane_id,
    )
    spans = _blocked_spans(workflow, window, done) if blocked and rows else {}
    items = []
    for task_id, title, created, started, finished, lane in rows:
        if started is not None and started > finished:
            started = None  # it reached done before it was ever active
        item = {
            "task_id": as_uuid(task_id),
            "title": title or "",
            "lane_id": None if lane is None else as_uuid(lane),
            "started_at": instant(started),
            "finished_at": instant(finished),
            "cycle_seconds": None if started is None else (finished - started) / 1e6,
            "lead_seconds": (finished - created) / 1e6,
        }
        if blocked:
            item["blocked_seconds"] = _blocked_within(spans.get(item["task_id"], []), started, finished) / 1e6
        items.append(item)
    return items


def _blocked_spans(workflow, window: Window, done: list) -> dict:
    """{task id: [(blocked us, unblocked us or None)]} from the blocked/unblocked events (a
    few per task) of the tasks that entered a done step in the window: the finished tasks
    and a few more, chosen in the database (a list of ids would cost more than the answer).
    A block of a blocked task only changes its reason."""
    finishing = TaskEvent.objects.filter(
        workflow=workflow, to_step_id__in=done, at__gte=window.start, at__lte=window.end
    ).values("task_id")
    events = (
        TaskEvent.objects.filter(
            workflow=workflow, kind__in=[EventKind.BLOCKED, EventKind.UNBLOCKED], task_id__in=finishing
        )
        .order_by("task_id", "id")
        .values_list("task_id", "kind", "at")
    )
    spans: dict = {}
    for task_id, kind, at in events:
        open_span = spans.get(task_id) and spans[task_id][-1][1] is None
        if kind == EventKind.BLOCKED and not open_span:
            spans.setdefault(task_id, []).append((us(at), None))
        elif kind == EventKind.UNBLOCKED and open_span:
            spans[task_id][-1] = (spans[task_id][-1][0], us(at))
    return spans


def _blocked_within(spans: list, started: int | None, finished: int) -> int:
    """Microseconds of `spans` inside the cycle [started, finished]; still blocked counts
    to the finish. No cycle, no blocked time."""
    if started is None:
        return 0
    return sum(max(0, min(end or finished, finished) - max(start, started)) for start, end in spans)


def _cycle_percentiles(items: list[dict]) -> dict:
    return _percentiles([i["cycle_seconds"] for i in items if i["cycle_seconds"] is not None])


def cycle_times(workflow, window: Window, board: BoardSteps | None = None, lane_id=None) -> dict:
    """The finished tasks' cycle and lead times, with their percentiles; and per lane of the
    board (in board order), its tasks' (the lane each task is in now)."""
    items = cycle_items(workflow, window, board, lane_id, blocked=True)
    lanes = []
    for lane in Lane.objects.filter(workflow=workflow).order_by("position", "created_at", "id"):
        own = [i for i in items if i["lane_id"] == lane.pk]
        lanes.append({"id": lane.pk, "name": lane.name, "count": len(own), "percentiles": _cycle_percentiles(own)})
    return {"items": items, "percentiles": _cycle_percentiles(items), "lanes": lanes}


def throughput(workflow, window: Window, interval: str, board: BoardSteps | None = None, lane_id=None) -> dict:
    board = board or BoardSteps.of(workflow)
    step = INTERVALS[interval]
    buckets = math.ceil((window.end - window.start) / step) or 1
    counts = [0] * buckets
    if board.ids(DONE):
        rows = queries.throughput(
            workflow.pk,
            done=board.ids(DONE),
            to=window.end,
            from_us=us(window.start),
            to_us=us(window.end),
            step_us=us(EPOCH + step),
            lane_id=lane_id,
        )
        for bucket, count in rows:
            counts[min(int(bucket), buckets - 1)] += count  # `to` itself closes the last bucket
    return {"buckets": [{"start": window.start + k * step, "count": counts[k]} for k in range(buckets)]}


def band(age: float | None, cuts: dict) -> str | None:
    """Where `age` falls among past cycle times' percentiles."""
    if age is None or cuts["50"] is None:
        return None
    if age < cuts["50"]:
        return "<50"
    if age < cuts["85"]:
        return "50-85"
    if age <= cuts["95"]:
        return "85-95"
    return ">95"


def aging(workflow, window: Window, now: datetime | None = None, board: BoardSteps | None = None, lane_id=None) -> dict:
    """Every live admitted task in an active step, aged since its first active entry; the
    bands come from the cycle times of tasks finished in the window. With a lane, its
    tasks, against its own tasks' cycle times."""
    now = now or timezone.now()
    board = board or BoardSteps.of(workflow)
    active = [s.pk for s in board.active]
    cuts = _cycle_percentiles(cycle_items(workflow, window, board, lane_id))
    started = (
        TaskEvent.objects.filter(task=OuterRef("pk"), kind__in=queries.ENTRY_KINDS)
        .exclude(to_step_id__in=board.ids(BACKLOG) + board.ids(DONE))
        .exclude(to_step__isnull=True)
        .values("task")
        .annotate(first=Min("at"))
        .values("first")
    )
    tasks = Task.objects.occupying().filter(workflow=workflow, step_id__in=active)
    if lane_id is not None:
        tasks = tasks.filter(lane_id=lane_id)
    tasks = tasks.annotate(started=Subquery(started)).order_by("started", "id").values_list("id", "step_id", "started")
    items = []
    for task_id, step_id, started_at in tasks:
        age = None if started_at is None else (now - started_at).total_seconds()
        items.append({"task_id": task_id, "step_id": step_id, "age_seconds": age, "percentile_band": band(age, cuts)})
    return {"items": items, "percentiles": cuts}


LOWERED_LIMIT = "limit_lowered"


def limits(workflow, window: Window, board: BoardSteps | None = None) -> dict:
    """The limit ledger of steps, groups, lanes, cells and people: each instant judged by the
    limit in force then (the configuration history, flow/config.py). A limit set at any time
    in the window is listed; `limit` is today's. A lane counts its tasks in today's active
    steps, a lane and a cell the tasks in that lane now (the current-lane rule,
    flow/queries.py); a person the tasks assigned to them in this board's active steps, and
    a forced admission is a cause of their breach when the task is theirs now."""
    board = board or BoardSteps.of(workflow)
    start_us, end_us = us(window.start), us(window.end)
    limits_set = config.limits_in_force(workflow, window, board.steps, board.ids(ACTIVE))
    limited = [limit for limit in limits_set if any(lim for _, lim in limit.series)]
    periods, judged = judge(workflow, window, limited)
    breaches = [(p.scope, p.started, p.ended, p.most_over) for p in periods if p.over]
    forced = queries.forced_admissions(workflow.pk, since=window.start, to=window.end)
    lowered = _lowerings(workflow, window)
    by_scope = {}
    for scope, started, ended, over in breaches:
        limit = limited[scope]
        forced_here = [
            (at, {"event_id": event_id, "kind": "forced", "actor": actor, "reason": reason})
            for event_id, to_step, at, actor, reason, lane, assignee in forced
            if _counts_in(limit, to_step, lane, assignee) and started <= at <= (ended if ended is not None else end_us)
        ]
        causes = [cause for _, cause in forced_here]
        # A breach going on at `from` is shown from there: its cause lies before the window.
        if started > start_us and (limit.scope, limit.id, started) in lowered:
            causes.insert(0, lowered[(limit.scope, limit.id, started)])
        elif started > start_us and not any(at == started for at, _ in forced_here):
            # Nothing recorded started it: tasks admitted within the limit of the time (before
            # the configuration history began) are over the limit now.
            causes.insert(
                0,
                {
                    "event_id": None,
                    "kind": LOWERED_LIMIT,
                    "actor": None,
                    "reason": "Admitted within the limit of the time; the limit is lower now.",
                },
            )
        by_scope.setdefault(scope, []).append(
            {
                "started_at": instant(started),
                "ended_at": instant(ended),
                "max_over": over,
                "causes": causes,
            }
        )
    result = []
    for index, (limit, sums) in enumerate(zip(limited, judged, strict=True)):
        result.append(
            {
                "scope": limit.scope,
                "id": limit.id,
                "name": limit.name,
                "limit": limit.limit,
                "at_limit_ratio": (sums.at_limit / 1e6) / window.seconds if window.seconds else 0.0,
                "over_limit_ratio": (sums.over_limit / 1e6) / window.seconds if window.seconds else 0.0,
                "never_reached": not sums.reached,
                "breaches": by_scope.get(index, []),
            }
        )
    return {"limits": result}


def judge(workflow, window: Window, limits: list[config.Limit], *, periods: bool = True) -> tuple[list, list]:
    """The periods of every limit over the window (one pass over its transitions), and
    their totals, in the order asked; without `periods`, the totals alone. The ledger and
    the limit advice judge here."""
    return queries.limit_periods(
        workflow.pk,
        limits=limits,
        frm=window.start,
        to=window.end,
        from_us=us(window.start),
        to_us=us(window.end),
        periods=periods,
    )


def _counts_in(limit: config.Limit, step_id, lane_id, assignee_id) -> bool:
    """Whether a task admitted into `step_id`, in `lane_id` and assigned to `assignee_id`
    now, counts in `limit`."""
    in_lane = limit.lane_id is None or (lane_id is not None and as_uuid(lane_id) == limit.lane_id)
    theirs = limit.person_id is None or assignee_id == limit.person_id
    return in_lane and theirs and step_id is not None and as_uuid(step_id) in limit.steps


def _lowerings(workflow, window: Window) -> dict:
    """{(scope, subject id, us): cause} of the recorded limit changes in the window that
    lowered a limit: a breach starting then was caused by them."""
    causes = {}
    for change in config.changes(workflow, window).filter(field="wip_limit"):
        if change.after and (not change.before or change.after < change.before):
            causes[(change.scope, change.subject_id, us(change.at))] = {
                "event_id": None,
                "kind": LOWERED_LIMIT,
                "actor": change.actor.get_username() if change.actor else None,
                "reason": f"Limit lowered from {change.before or 'none'} to {change.after}.",
            }
    return causes


def queues(workflow, window: Window, board: BoardSteps | None = None) -> dict:
    """Per step: how long tasks waited in its queue (waits that ended in the window, in
    seconds, percentiles), and how many tasks were queued, promoted and pulled into it."""
    board = board or BoardSteps.of(workflow)
    ranks = {}
    for step_id, n, rank, wait in queries.queue_wait_ranks(
        workflow.pk, frm=window.start, to=window.end, percentiles=PERCENTILES
    ):
        ranks.setdefault(as_uuid(step_id), {"n": int(n)})[int(rank)] = int(wait) / 1e6
    counted = (
        TaskEvent.objects.filter(
            workflow=workflow,
            at__gte=window.start,
            at__lte=window.end,
            kind__in=[EventKind.QUEUED, EventKind.PROMOTED, EventKind.PULLED],
        )
        .values_list("to_step_id", "kind")
        .annotate(n=Count("id"))
        .order_by()
    )
    counts = {(step_id, kind): n for step_id, kind, n in counted}
    result = []
    for step in board.steps:
        waits = ranks.get(step.pk, {"n": 0})
        result.append(
            {
                "id": step.pk,
                "name": step.name,
                "waits": waits["n"],
                "wait_percentiles": {str(p): _ranked(waits, p) for p in PERCENTILES},
                **{kind: counts.get((step.pk, kind), 0) for kind in ("queued", "promoted", "pulled")},
            }
        )
    return {"steps": result}


def _ranked(waits: dict, p: int) -> float | None:
    """`percentile()` from the two ranks around (n - 1) * p / 100."""
    if not waits["n"]:
        return None
    rank = (waits["n"] - 1) * p / 100
    low = math.floor(rank)
    high = waits.get(low + 1, waits[low])
    return waits[low] + (high - waits[low]) * (rank - low)
