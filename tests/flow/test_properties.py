"""On random histories, the API's CFD, cycle times, throughput and limit ledger equal a plain
replay of `GET /api/v1/workflows/{id}/events/` in Python (the references below)."""

import math
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from boards.models import TaskEvent
from tests.factories import StepFactory
from tests.flow.factories import TaskEventFactory

T0 = datetime(2024, 5, 1, tzinfo=UTC)
FROM, TO = T0, T0 + timedelta(days=3, hours=5)
ENTRY = {"created", "moved", "pulled", "promoted", "restored", "forced"}

# One step of a random history: which task acts, a choice among its possible actions, the
# target step (4 = a step that was deleted since), and minutes since the previous event.
operations = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 9), st.integers(0, 4), st.integers(0, 600)),
    min_size=1,
    max_size=40,
)


def build(workflow, steps, gone, ops):
    """Write a valid history: each task's actions follow from its state."""
    targets = [*steps, gone]
    state = {}  # task -> (step index, "admitted" | "queued" | "archived" | "deleted")
    ids = {}
    at = T0 - timedelta(days=1)
    for task, choice, target, minutes in ops:
        at += timedelta(minutes=minutes)
        tid = ids.setdefault(task, uuid.uuid4())
        current = state.get(task)
        if current is None:
            kind = ["created", "queued", "forced"][choice % 3]
            state[task] = (target, "queued" if kind == "queued" else "admitted")
            TaskEventFactory(workflow=workflow, task_id=tid, kind=kind, to_step_id=targets[target].pk, at=at)
            continue
        step, how = current
        src = targets[step].pk
        if how == "deleted":
            continue
        if how == "archived":
            state[task] = (step, "admitted")
            TaskEventFactory(workflow=workflow, task_id=tid, kind="restored", to_step_id=src, at=at)
            continue
        actions = ["moved", "pulled", "forced", "reorder", "archived", "deleted", "queued"]
        if how == "queued":
            actions.append("promoted")
        kind = actions[choice % len(actions)]
        if kind == "reorder":
            TaskEventFactory(workflow=workflow, task_id=tid, kind="moved", from_step_id=src, to_step_id=src, at=at)
        elif kind in ("archived", "deleted"):
            state[task] = (step, kind)
            TaskEventFactory(workflow=workflow, task_id=tid, kind=kind, from_step_id=src, at=at)
        elif kind == "promoted":
            state[task] = (step, "admitted")
            TaskEventFactory(workflow=workflow, task_id=tid, kind=kind, to_step_id=src, at=at)
        else:
            state[task] = (target, "queued" if kind == "queued" else "admitted")
            TaskEventFactory(
                workflow=workflow, task_id=tid, kind=kind, from_step_id=src, to_step_id=targets[target].pk, at=at
            )


def all_events(api, workflow):
    events, url = [], f"/api/v1/workflows/{workflow.pk}/events/?page_size=1000"
    while url:
        page = api.get(url).json()
        events += page["results"]
        url = page["next"]
    for e in events:
        e["at"] = datetime.fromisoformat(e["at"])
    return sorted(events, key=lambda e: (e["at"], e["id"]))


def is_state_event(e):
    if e["kind"] == "moved" and e["from_step_id"] == e["to_step_id"]:
        return False
    return e["kind"] in ENTRY | {"queued", "archived", "deleted"}


def replay_counts(events, instant, step_ids):
    """(admitted, queued) per step after every event at or before `instant`."""
    where = {}
    for e in events:
        if e["at"] > instant or not is_state_event(e):
            continue
        if e["kind"] in ("archived", "deleted"):
            where[e["task_id"]] = None
        else:
            where[e["task_id"]] = (e["to_step_id"], e["kind"] == "queued")
    counts = {s: 0 for s in step_ids}
    queued = {s: 0 for s in step_ids}
    for place in where.values():
        if place and place[0] in counts:
            (queued if place[1] else counts)[place[0]] += 1
    return counts, queued


def replay_arrivals(events, instant, step_ids, done):
    """Per step in board order: the tasks that entered it or a later step (admitted) at or
    before `instant`, leaving out the tasks deleted without ever entering done."""
    furthest, deleted, finished = {}, set(), set()
    for e in events:
        if e["kind"] == "deleted":
            deleted.add(e["task_id"])
        if not is_state_event(e) or e["kind"] not in ENTRY:
            continue
        finished |= {e["task_id"]} if e["to_step_id"] == done else set()
        if e["at"] <= instant and e["to_step_id"] in step_ids:
            furthest[e["task_id"]] = max(furthest.get(e["task_id"], -1), step_ids.index(e["to_step_id"]))
    kept = [f for task, f in furthest.items() if task not in deleted - finished]
    return {s: sum(1 for f in kept if f >= i) for i, s in enumerate(step_ids)}


def reference_cycles(events, backlog, done):
    tasks = {}
    for e in events:
        t = tasks.setdefault(e["task_id"], {"created": e["at"], "started": None, "finished": None})
        if e["kind"] not in ENTRY or (e["kind"] == "moved" and e["from_step_id"] == e["to_step_id"]):
            continue
        if e["to_step_id"] == done and t["finished"] is None:
            t["finished"] = e["at"]
        if e["to_step_id"] not in (backlog, done) and t["started"] is None:
            t["started"] = e["at"]
    result = {}
    for task_id, t in tasks.items():
        if t["finished"] is None or not FROM <= t["finished"] <= TO:
            continue
        started = t["started"] if t["started"] is not None and t["started"] <= t["finished"] else None
        result[task_id] = (
            None if started is None else (t["finished"] - started).total_seconds(),
            (t["finished"] - t["created"]).total_seconds(),
            t["finished"],
        )
    return result


@pytest.fixture
def unthrottled(settings):
    """Each example asks for every figure: more than a user's rate in a minute."""
    settings.KANDEV_FLOW_RATE = "100000/minute"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_figures_equal_a_replay_of_the_history(api, workflow, unthrottled, ops):
    steps = list(workflow.steps.order_by("position")) or [
        StepFactory(workflow=workflow, name=name, position=i, kind=kind)
        for i, (name, kind) in enumerate(
            [("Backlog", "backlog"), ("Doing", "active"), ("Review", "active"), ("Done", "done")]
        )
    ]
    TaskEvent.objects.filter(workflow=workflow).delete()
    build(workflow, steps, StepFactory.build(workflow=workflow), ops)
    events = all_events(api, workflow)
    window = {"from": FROM.isoformat().replace("+00:00", "Z"), "to": TO.isoformat().replace("+00:00", "Z")}
    step_ids = [str(s.pk) for s in steps]

    wip = api.get(f"/api/v1/workflows/{workflow.pk}/flow/wip/", window).json()
    expected_points = [FROM + timedelta(days=k) for k in range(4)] + [TO]
    assert [datetime.fromisoformat(p["at"]) for p in wip["points"]] == expected_points
    for point, instant in zip(wip["points"], expected_points, strict=True):
        assert (point["counts"], point["queued"]) == replay_counts(events, instant, step_ids), instant

    cfd = api.get(f"/api/v1/workflows/{workflow.pk}/flow/cfd/", window).json()
    for point, instant in zip(cfd["points"], expected_points, strict=True):
        assert point["arrived"] == replay_arrivals(events, instant, step_ids, step_ids[-1]), instant
    for i, step_id in enumerate(step_ids):  # each line only rises, and never above the one before
        line = [p["arrived"][step_id] for p in cfd["points"]]
        assert line == sorted(line)
        assert i == 0 or all(p["arrived"][step_id] <= p["arrived"][step_ids[i - 1]] for p in cfd["points"])

    cycles = api.get(f"/api/v1/workflows/{workflow.pk}/flow/cycle-times/", window).json()
    got = {i["task_id"]: (i["cycle_seconds"], i["lead_seconds"]) for i in cycles["items"]}
    backlog, done = (next(str(s.pk) for s in steps if s.kind == kind) for kind in ("backlog", "done"))
    expected = reference_cycles(events, backlog, done)
    assert got == {task: (cycle, lead) for task, (cycle, lead, _) in expected.items()}
    values = sorted(c for c, _, _ in expected.values() if c is not None)
    for p in ("50", "85", "95"):
        if not values:
            assert cycles["percentiles"][p] is None
            continue
        rank = (len(values) - 1) * int(p) / 100
        low, high = values[math.floor(rank)], values[math.ceil(rank)]
        assert math.isclose(cycles["percentiles"][p], low + (high - low) * (rank - math.floor(rank)))

    buckets = api.get(f"/api/v1/workflows/{workflow.pk}/flow/throughput/", {**window, "interval": "day"}).json()[
        "buckets"
    ]
    by_day = [0] * 4
    for _, _, at in expected.values():
        by_day[min(int((at - FROM) / timedelta(days=1)), 3)] += 1
    assert [b["count"] for b in buckets] == by_day


def replay_stretches(events, step_id, step_ids):
    """One step over [FROM, TO]: (instant, seconds until the next, admitted count) after every
    instant at which something happened."""
    instants = [FROM, *sorted({e["at"] for e in events if FROM < e["at"] <= TO})]
    return [
        (
            instant,
            ((instants[i + 1] if i + 1 < len(instants) else TO) - instant).total_seconds(),
            replay_counts(events, instant, step_ids)[0][step_id],
        )
        for i, instant in enumerate(instants)
    ]


def replay_ledger(stretches, limit):
    """One limited step's `replay_stretches`: (seconds at the limit, seconds over it, breaches
    as (start, end or None while it lasts, most over the limit), whether it reached the limit)."""
    at_limit = over = 0.0
    breaches = []
    for instant, seconds, count in stretches:
        at_limit += seconds if count == limit else 0
        over += seconds if count > limit else 0
        if count > limit and (not breaches or breaches[-1][1] is not None):
            breaches.append([instant, None, count - limit])
        elif count > limit:
            breaches[-1][2] = max(breaches[-1][2], count - limit)
        elif breaches and breaches[-1][1] is None:
            breaches[-1][1] = instant
    return at_limit, over, [tuple(b) for b in breaches], any(count >= limit for _, _, count in stretches)


def replay_little(events, step_id, stretches):
    """Little's law's measures of one step over [FROM, TO] (its `replay_stretches`): its
    average admitted count, and its departures (an admitted task leaving it, queued, archived
    or deleted) per day."""
    held = sum(seconds * count for _, seconds, count in stretches)
    where, departures = {}, 0
    for e in events:
        if e["at"] > TO or not is_state_event(e):
            continue
        before = where.get(e["task_id"])
        where[e["task_id"]] = None if e["kind"] in ("archived", "deleted") else (e["to_step_id"], e["kind"] == "queued")
        departures += e["at"] >= FROM and before == (step_id, False) and where[e["task_id"]] != before
    seconds = (TO - FROM).total_seconds()
    return held / seconds, departures / (seconds / 86400)


# The ledger's edge cases need shared instants: several tasks moving at once (0 minutes
# apart), and changes exactly at `from` and at `to` (whole hours after the first event).
ledger_operations = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 9), st.integers(0, 4), st.sampled_from([0, 60, 240, 720, 1440])),
    min_size=1,
    max_size=40,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ledger_operations)
# Admitted in Doing at `from`, then queued in Doing itself: a departure that stays in the step.
@example(ops=[(0, 0, 1, 1440), (0, 6, 1, 720)])
def test_the_limit_ledger_equals_a_replay_of_the_history(api, workflow, unthrottled, ops):
    """Limits of 1 and 2, which random histories cross often. The limit advice's judgement,
    summed without the periods, and its Little's law measures equal it too."""
    steps = list(workflow.steps.order_by("position")) or [
        StepFactory(workflow=workflow, name=name, position=i, kind=kind, wip_limit=limit)
        for i, (name, kind, limit) in enumerate(
            [("Backlog", "backlog", 0), ("Doing", "active", 1), ("Review", "active", 2), ("Done", "done", 0)]
        )
    ]
    TaskEvent.objects.filter(workflow=workflow).delete()
    build(workflow, steps, StepFactory.build(workflow=workflow), ops)
    events = all_events(api, workflow)
    window = {"from": FROM.isoformat().replace("+00:00", "Z"), "to": TO.isoformat().replace("+00:00", "Z")}
    ledger = api.get(f"/api/v1/workflows/{workflow.pk}/flow/limits/", window).json()["limits"]
    advice = {
        row["id"]: row for row in api.get(f"/api/v1/workflows/{workflow.pk}/flow/advice/", window).json()["limits"]
    }
    step_ids = [str(s.pk) for s in steps]
    assert [row["name"] for row in ledger] == ["Doing", "Review"]
    seconds = (TO - FROM).total_seconds()
    for row in ledger:
        stretches = replay_stretches(events, str(row["id"]), step_ids)
        at_limit, over, breaches, reached = replay_ledger(stretches, row["limit"])
        assert math.isclose(row["at_limit_ratio"], at_limit / seconds, abs_tol=1e-12), row["name"]
        assert math.isclose(row["over_limit_ratio"], over / seconds, abs_tol=1e-12), row["name"]
        assert row["never_reached"] is not reached, row["name"]
        advised = advice[row["id"]]
        assert math.isclose(advised["at_limit_ratio"], at_limit / seconds, abs_tol=1e-12), row["name"]
        assert advised["never_reached"] is not reached, row["name"]
        assert advised["always_at_limit"] is (at_limit + over == seconds), row["name"]
        avg_wip, throughput = replay_little(events, str(row["id"]), stretches)
        assert math.isclose(advised["avg_wip"], avg_wip, abs_tol=1e-12), row["name"]
        assert math.isclose(advised["throughput_per_day"], throughput, abs_tol=1e-12), row["name"]
        got = [
            (
                datetime.fromisoformat(b["started_at"]),
                b["ended_at"] and datetime.fromisoformat(b["ended_at"]),
                b["max_over"],
            )
            for b in row["breaches"]
        ]
        assert got == breaches, row["name"]
