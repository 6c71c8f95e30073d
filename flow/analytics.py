"""The figures that judge a board's service and limits, from its history in a window:
service-level expectations, limit advice by Little's law, blocker clusters and flow
efficiency."""

import math
import re
import statistics
from collections import Counter

from boards.models import ClassOfService, EventKind, Task, TaskEvent
from flow import config, queries
from flow.figures import Window, as_uuid, cycle_items, judge, percentile, us
from flow.kinds import ACTIVE, BACKLOG, DONE, BoardSteps
from flow.models import ServiceLevel
from workflows.models import LimitScope

DAY_SECONDS = 86400
SLE_PERCENTILE = 85


def _classes_at_finish(workflow, items: list[dict]) -> dict:
    """{task id: its class of service when it finished}. Only changes are recorded (a
    `classified` event with the new class), and there are two classes: a task's class is
    its last change before it finished; without one, the other class than its first change
    after; without any, the class it has now (standard for a deleted task)."""
    finished = {i["task_id"]: i["finished_at"] for i in items}
    changes: dict = {}
    for task_id, at, detail in (
        TaskEvent.objects.filter(workflow=workflow, kind=EventKind.CLASSIFIED)
        .order_by("at", "id")
        .values_list("task_id", "at", "detail")
    ):
        if task_id in finished:
            changes.setdefault(task_id, []).append((at, detail.get("class_of_service")))
    expedite = set(
        Task.objects.filter(workflow=workflow, class_of_service=ClassOfService.EXPEDITE).values_list("id", flat=True)
    )
    other = {ClassOfService.STANDARD: ClassOfService.EXPEDITE, ClassOfService.EXPEDITE: ClassOfService.STANDARD}
    classes = {
        task_id: ClassOfService.EXPEDITE if task_id in expedite else ClassOfService.STANDARD for task_id in finished
    }
    for task_id, changed in changes.items():  # each task's changes in order
        before = [c for when, c in changed if when <= finished[task_id]]
        classes[task_id] = before[-1] if before else other[changed[0][1]]
    return classes


def sle(workflow, window: Window, board: BoardSteps | None = None, items: list | None = None) -> dict:
    """Per class of service, "85% of tasks finish within N days": the days an owner set
    (ServiceLevel), or else the 85th percentile of the cycle times finished in the window,
    rounded up to whole days; with the history's percentile and sample either way."""
    items = [i for i in (items if items is not None else cycle_items(workflow, window, board)) if i["cycle_seconds"]]
    classes = _classes_at_finish(workflow, items)
    owner_set = dict(ServiceLevel.objects.filter(workflow=workflow).values_list("class_of_service", "days"))
    result = []
    for cos in ClassOfService.values:
        cycles = sorted(i["cycle_seconds"] for i in items if classes[i["task_id"]] == cos)
        seconds = percentile(cycles, SLE_PERCENTILE)
        result.append(
            {
                "class_of_service": cos,
                "days": owner_set.get(cos, None if seconds is None else max(1, math.ceil(seconds / DAY_SECONDS))),
                "cycle_seconds": seconds,
                "percentile": SLE_PERCENTILE,
                "sample": len(cycles),
                "set_by": "owner" if cos in owner_set else "history",
            }
        )
    return {"sles": result}


def set_service_level(*, workflow, class_of_service: str, days: int | None, actor) -> None:
    """An owner's SLE for a class of service; `days` None goes back to the history's."""
    if days is None:
        ServiceLevel.objects.filter(workflow=workflow, class_of_service=class_of_service).delete()
        return
    ServiceLevel.objects.update_or_create(
        workflow=workflow, class_of_service=class_of_service, defaults={"days": days, "set_by": actor}
    )


def advice(workflow, window: Window, board: BoardSteps | None = None) -> dict:
    """Per limited step, step group and person: Little's law on the window, L = λ × W. L
    (average WIP) and λ (departures per day) are measured; W (average days in the scope) is
    L / λ. The suggested limit keeps the scope's share of the board's average cycle time
    while the whole cycle meets the standard SLE: λ × W × SLE / (average cycle), rounded
    up. Beside it, the ledger's judgement of the limit: the share of the window at it,
    never reached, always at or over it (each instant by the limit in force then). A
    person's WIP is their assigned tasks admitted in this board's active steps."""
    board = board or BoardSteps.of(workflow)
    advised = [
        limit
        for limit in config.limits_in_force(workflow, window, board.steps, board.ids(ACTIVE))
        if (limit.scope == LimitScope.STEP and limit.limit)
        or limit.scope == LimitScope.GROUP
        or (limit.scope == LimitScope.PERSON and any(lim for _, lim in limit.series))
    ]
    items = cycle_items(workflow, window, board)
    standard = next(s for s in sle(workflow, window, board, items)["sles"] if s["class_of_service"] == "standard")
    cycles = [i["cycle_seconds"] / DAY_SECONDS for i in items if i["cycle_seconds"]]
    mean_cycle = statistics.fmean(cycles) if cycles else None
    days = window.seconds / DAY_SECONDS
    window_us = us(window.end) - us(window.start)
    _, judged = judge(workflow, window, advised, periods=False)
    result = []
    for limit, sums in zip(advised, judged, strict=True):
        avg_wip = sums.held / 1e6 / window.seconds
        throughput = sums.departures / days
        avg_days = avg_wip / throughput if throughput else None
        suggested, arithmetic = None, "No task left it in the window: no throughput to judge by."
        if avg_days is not None and standard["days"] and mean_cycle:
            target = avg_days * standard["days"] / mean_cycle
            suggested = max(1, math.ceil(throughput * target))
            arithmetic = (
                f"{throughput:.2f} tasks/day × {target:.2f} days = {throughput * target:.2f},"
                f" rounded up to {suggested}:"
                f" {avg_days:.2f} days on average here, scaled by the SLE of {standard['days']} days"
                f" over the average cycle of {mean_cycle:.2f} days."
            )
        elif avg_days is not None:
            arithmetic = "No finished task in the window: no SLE to aim at."
        result.append(
            {
                "scope": limit.scope,
                "id": limit.person_id if limit.person_id is not None else limit.id,
                "name": limit.name,
                "limit": limit.limit,
                "avg_wip": avg_wip,
                "throughput_per_day": throughput,
                "avg_cycle_days": avg_days,
                "suggested_limit": suggested,
                "arithmetic": arithmetic,
                "at_limit_ratio": sums.at_limit / window_us if window_us else 0.0,
                "never_reached": not sums.reached,
                "always_at_limit": bool(window_us) and sums.at_limit + sums.over_limit == window_us,
            }
        )
    return {"sle_days": standard["days"], "avg_cycle_days": mean_cycle, "limits": result}


def _cluster(reason: str) -> str:
    """Reasons that differ only in case and spacing are one cluster."""
    return re.sub(r"\s+", " ", reason).strip().casefold()


def blockers(workflow, window: Window, board: BoardSteps | None = None) -> dict:
    """Blocks that overlap the window, clustered by reason and by type: how many, the
    blocked days inside the window, and the median length of those that ended (whole, also
    outside). Per type also the capacity it held: its blocked days while the task held a
    slot of an active step, and their share of all the slot-days active steps held in the
    window (`occupied_days`)."""
    board = board or BoardSteps.of(workflow)
    start, end = us(window.start), us(window.end)
    found = queries.blocks(workflow.pk, frm=window.start, to=window.end)
    clusters: dict = {}
    for _task, reason, _type, _name, started, ended in found:
        c = clusters.setdefault(_cluster(reason), {"spellings": Counter(), "count": 0, "held": 0, "lengths": []})
        c["spellings"][reason] += 1
        c["count"] += 1
        c["held"] += min(ended if ended is not None else end, end) - max(started, start)
        if ended is not None:
            c["lengths"].append((ended - started) / 1e6)
    result = [
        {
            "reason": c["spellings"].most_common(1)[0][0],
            "count": c["count"],
            "blocked_days": c["held"] / 1e6 / DAY_SECONDS,
            "median_seconds": statistics.median(c["lengths"]) if c["lengths"] else None,
            "ongoing": c["count"] - len(c["lengths"]),
        }
        for c in clusters.values()
    ]
    result.sort(key=lambda r: (-r["blocked_days"], r["reason"]))
    occupied, types = _blocker_types(workflow, board, window, found)
    return {"blockers": result, "types": types, "occupied_days": occupied}


def _blocker_types(workflow, board: BoardSteps, window: Window, found: list) -> tuple[float, list[dict]]:
    """(occupied days, a row per blocker type and one for blocks without a type)."""
    start, end = us(window.start), us(window.end)
    occupied, capacity = queries.blocked_capacity(
        workflow.pk,
        not_active=board.ids(BACKLOG) + board.ids(DONE),
        frm=window.start,
        to=window.end,
        from_us=start,
        to_us=end,
    )
    types: dict = {}
    for _task, _reason, type_id, name, started, ended in found:
        # The name its latest block recorded (found is in time order): a deleted type keeps it.
        t = types.setdefault(type_id, {"count": 0, "held": 0, "lengths": []})
        t["name"] = name
        t["count"] += 1
        t["held"] += min(ended if ended is not None else end, end) - max(started, start)
        if ended is not None:
            t["lengths"].append((ended - started) / 1e6)
    rows = [
        {
            "type_id": type_id,
            "name": t["name"],
            "count": t["count"],
            "held_days": t["held"] / 1e6 / DAY_SECONDS,
            "median_seconds": statistics.median(t["lengths"]) if t["lengths"] else None,
            "ongoing": t["count"] - len(t["lengths"]),
            "capacity_days": capacity.get(type_id, 0) / 1e6 / DAY_SECONDS,
            "capacity_share": capacity.get(type_id, 0) / occupied if occupied else None,
        }
        for type_id, t in types.items()
    ]
    rows.sort(key=lambda r: (-r["held_days"], r["type_id"] is None, r["name"] or ""))
    return occupied / 1e6 / DAY_SECONDS, rows


def efficiency(workflow, window: Window, board: BoardSteps | None = None) -> dict:
    """Per task first finished in the window: its lead time split into working (admitted in
    an active step, less the time blocked in its cycle) and waiting (everything else:
    backlog, queues, blocks); flow efficiency is working over lead."""
    board = board or BoardSteps.of(workflow)
    items = cycle_items(workflow, window, board, blocked=True)
    if not items:
        return {"items": [], "efficiency": None, "percentiles": {"50": None, "85": None, "95": None}}
    active = dict(
        (as_uuid(task_id), held / 1e6)
        for task_id, held in queries.active_time(
            workflow.pk,
            done=board.ids(DONE),
            not_active=board.ids(BACKLOG) + board.ids(DONE),
            frm=window.start,
            to=window.end,
        )
    )
    result = []
    for i in items:
        working = max(0.0, active.get(i["task_id"], 0.0) - i["blocked_seconds"])
        lead = i["lead_seconds"]
        result.append(
            {
                "task_id": i["task_id"],
                "title": i["title"],
                "finished_at": i["finished_at"],
                "lead_seconds": lead,
                "active_seconds": active.get(i["task_id"], 0.0),
                "blocked_seconds": i["blocked_seconds"],
                "working_seconds": working,
                "waiting_seconds": lead - working,
                "efficiency": working / lead if lead else None,
            }
        )
    ratios = sorted(r["efficiency"] for r in result if r["efficiency"] is not None)
    total_lead = sum(r["lead_seconds"] for r in result)
    return {
        "items": result,
        "efficiency": sum(r["working_seconds"] for r in result) / total_lead if total_lead else None,
        "percentiles": {str(p): percentile(ratios, p) for p in (50, 85, 95)},
    }
