"""Each flow figure against values computed by hand from one history with explicit
timestamps (tests/flow/conftest.py's `history`)."""

import uuid

import pytest

from flow import figures
from flow.figures import Window
from tests.factories import StepFactory
from tests.flow.factories import TaskEventFactory
from tests.flow.history import WINDOW, hours


def test_cfd_counts_arrivals_in_each_step_or_a_later_one(workflow, history):
    """A: 0 Backlog, 1 Doing, 3 Review, 6 Done (back and forth between: no line goes down);
    C reaches Done at 4 through the deleted step X; B: 2 Doing, 5.5 Review (counted from the
    point at 6), archived and restored, 11 Done; E: 2 Doing; D was deleted: on no line."""
    bl, do, rv, dn = history["steps"]
    data = figures.cfd(workflow, WINDOW, "hour")
    assert [p["at"] for p in data["points"]] == [hours(k) for k in range(-1, 13)]
    table = [tuple(p["arrived"][str(s.pk)] for s in (bl, do, rv, dn)) for p in data["points"]]
    assert table == [
        (0, 0, 0, 0),  # -1
        (2, 0, 0, 0),  # 0: A, C
        (2, 1, 0, 0),  # 1: A in Doing (D in Backlog is not counted: deleted at 3, never done)
        (4, 3, 0, 0),  # 2: B, E
        (4, 3, 1, 0),  # 3: A in Review
        (4, 4, 2, 1),  # 4: C in Done, so in every line
        (4, 4, 2, 1),  # 5
        (4, 4, 3, 2),  # 6: B in Review at 5.5, A in Done
        (4, 4, 3, 2),  # 7: A back to Review: Done stays
        (4, 4, 3, 2),  # 8
        (4, 4, 3, 2),  # 9: B archived
        (4, 4, 3, 2),  # 10: B restored
        (4, 4, 3, 3),  # 11: B in Done
        (4, 4, 3, 3),  # 12 = to
    ]
    assert [s["kind"] for s in data["steps"]] == ["backlog", "active", "active", "done"]


def test_the_done_line_keeps_archived_and_deleted_finished_tasks(workflow, history):
    """Archiving or deleting a finished task takes nothing from the lines; a task deleted
    before it finished leaves all of them, also where it had arrived."""
    bl, do, rv, dn = history["steps"]
    t = history["tasks"]
    TaskEventFactory(workflow=workflow, task_id=t["A"], kind="archived", from_step_id=dn.pk, at=hours(9.5))
    TaskEventFactory(workflow=workflow, task_id=t["C"], kind="deleted", from_step_id=dn.pk, at=hours(9.5))
    TaskEventFactory(workflow=workflow, task_id=t["E"], kind="deleted", from_step_id=do.pk, at=hours(11.5))
    table = [
        tuple(p["arrived"][str(s.pk)] for s in (bl, do, rv, dn))
        for p in figures.cfd(workflow, WINDOW, "hour")["points"]
    ]
    assert table[3] == (3, 2, 0, 0)  # 2: E has left the lines from the start
    assert [row[3] for row in table] == [0, 0, 0, 0, 0, 1, 1, 2, 2, 2, 2, 2, 3, 3]
    assert table[-1] == (3, 3, 3, 3)


def test_wip_counts_each_step_at_each_point(workflow, history):
    bl, do, rv, dn = history["steps"]
    data = figures.wip(workflow, WINDOW, "hour")
    assert [p["at"] for p in data["points"]] == [hours(k) for k in range(-1, 13)]
    table = [tuple(p["counts"][str(s.pk)] for s in (bl, do, rv, dn)) for p in data["points"]]
    assert table == [
        (0, 0, 0, 0),  # -1
        (2, 0, 0, 0),  # 0
        (2, 1, 0, 0),  # 1
        (1, 3, 0, 0),  # 2: C is in the deleted step, not drawn
        (0, 2, 1, 0),  # 3
        (0, 3, 0, 1),  # 4
        (0, 2, 1, 1),  # 5
        (0, 1, 1, 2),  # 6
        (0, 1, 2, 1),  # 7
        (0, 1, 1, 2),  # 8
        (0, 1, 0, 2),  # 9
        (0, 1, 1, 2),  # 10
        (0, 1, 0, 3),  # 11
        (0, 1, 0, 3),  # 12 = to
    ]
    assert data["steps"] == [{"id": s.pk, "name": s.name, "wip_limit": s.wip_limit} for s in (bl, do, rv, dn)]
    assert all(n == 0 for p in data["points"] for n in p["queued"].values())


def test_wip_counts_queued_tasks_apart(workflow, history):
    bl, do, rv, dn = history["steps"]
    task = uuid.uuid4()
    TaskEventFactory(workflow=workflow, task_id=task, kind="queued", to_step_id=rv.pk, at=hours(2.5))
    TaskEventFactory(workflow=workflow, task_id=task, kind="moved", from_step_id=rv.pk, to_step_id=rv.pk, at=hours(2.7))
    TaskEventFactory(workflow=workflow, task_id=task, kind="promoted", to_step_id=rv.pk, at=hours(4.5))
    points = figures.wip(workflow, WINDOW, "hour")["points"]
    assert [p["queued"][str(rv.pk)] for p in points][3:7] == [0, 1, 1, 0]
    assert [p["counts"][str(rv.pk)] for p in points][3:7] == [0, 1, 0, 2]
    review = next(s for s in figures.queues(workflow, WINDOW)["steps"] if s["name"] == "Review")
    assert review == {
        "id": rv.pk,
        "name": "Review",
        "waits": 1,
        "queued": 1,
        "promoted": 1,
        "pulled": 0,
        "wait_percentiles": {"50": 7200, "85": 7200, "95": 7200},
    }


def test_queue_wait_percentiles_interpolate(workflow, history):
    bl, do, rv, dn = history["steps"]
    for wait in (1, 2, 3, 10):  # hours in Doing's queue, each ending at 11
        task = uuid.uuid4()
        TaskEventFactory(workflow=workflow, task_id=task, kind="queued", to_step_id=do.pk, at=hours(11 - wait))
        TaskEventFactory(workflow=workflow, task_id=task, kind="promoted", to_step_id=do.pk, at=hours(11))
    doing = next(s for s in figures.queues(workflow, WINDOW)["steps"] if s["name"] == "Doing")
    assert doing["waits"] == 4
    assert doing["wait_percentiles"] == {
        "50": 2.5 * 3600,
        "85": pytest.approx((3 + 7 * 0.55) * 3600),
        "95": pytest.approx((3 + 7 * 0.85) * 3600),
    }


def test_a_queue_wait_begun_before_the_window_counts_whole(workflow, history):
    """The state at `from` comes from each task's last event before it: the wait's start."""
    bl, do, rv, dn = history["steps"]
    task = uuid.uuid4()
    TaskEventFactory(workflow=workflow, task_id=task, kind="queued", to_step_id=rv.pk, at=hours(-5))
    TaskEventFactory(workflow=workflow, task_id=task, kind="moved", from_step_id=rv.pk, to_step_id=rv.pk, at=hours(-3))
    TaskEventFactory(workflow=workflow, task_id=task, kind="promoted", to_step_id=rv.pk, at=hours(2))
    review = next(s for s in figures.queues(workflow, WINDOW)["steps"] if s["name"] == "Review")
    assert review["waits"] == 1
    assert review["wait_percentiles"] == {"50": 7 * 3600, "85": 7 * 3600, "95": 7 * 3600}
    points = figures.wip(workflow, WINDOW, "hour")["points"]
    assert [p["queued"][str(rv.pk)] for p in points][:5] == [1, 1, 1, 0, 0]  # promoted at 2: counted from 2


def test_cycle_and_lead_times_from_first_active_to_first_done(workflow, history):
    t = history["tasks"]
    data = figures.cycle_times(workflow, WINDOW)
    got = [
        (i["task_id"], i["title"], i["started_at"], i["finished_at"], i["cycle_seconds"], i["lead_seconds"])
        for i in data["items"]
    ]
    assert got == [
        (t["C"], "C", hours(2), hours(4), 2 * 3600, 4 * 3600),  # via the deleted step: active
        (t["A"], "A", hours(1), hours(6), 5 * 3600, 6 * 3600),  # its re-entry at 8 does not count
        (t["B"], "B", hours(2), hours(11), 9 * 3600, 9 * 3600),  # archived and restored
    ]
    assert data["percentiles"] == {"50": 5 * 3600, "85": pytest.approx(7.8 * 3600), "95": pytest.approx(8.6 * 3600)}


def test_blocked_time_is_the_blocked_part_of_the_cycle(workflow, history):
    # A's cycle is [1, 6]: blocked 0.5-1.5 (0.5 h inside), 2-3 with a new reason at 2.5
    # (1 h), and from 5.5 to its finish at 6 (0.5 h; it stays blocked). C (cycle [2, 4])
    # was unblocked without a block (nothing); B was never blocked.
    t = history["tasks"]

    def event(task, kind, at):
        TaskEventFactory(workflow=workflow, task_id=t[task], kind=kind, at=hours(at), reason="waiting on ops")

    for at, kind in [(0.5, "blocked"), (1.5, "unblocked"), (2, "blocked"), (2.5, "blocked"), (3, "unblocked")]:
        event("A", kind, at)
    event("A", "blocked", 5.5)
    event("C", "unblocked", 3)
    items = {i["title"]: i["blocked_seconds"] for i in figures.cycle_times(workflow, WINDOW)["items"]}
    assert items == {"A": 2 * 3600, "B": 0, "C": 0}


def test_a_task_counts_where_it_first_finished(workflow, history):
    # A first reached Done at 6; re-entering at 8 does not make it finish in [7, 12].
    items = figures.cycle_times(workflow, Window(hours(7), hours(12)))["items"]
    assert [i["title"] for i in items] == ["B"]


def test_throughput_counts_first_entries_into_done(workflow, history):
    assert figures.throughput(workflow, WINDOW, "day")["buckets"] == [{"start": WINDOW.start, "count": 3}]
    assert figures.throughput(workflow, Window(hours(7), hours(12)), "day")["buckets"] == [
        {"start": hours(7), "count": 1}
    ]
    two_days = Window(hours(-19), hours(29))  # days [-19, 5) and [5, 29)
    assert [b["count"] for b in figures.throughput(workflow, two_days, "day")["buckets"]] == [1, 2]
    assert figures.throughput(workflow, two_days, "week")["buckets"] == [{"start": hours(-19), "count": 3}]


def test_aging_wip_bands_against_past_cycle_times(workflow, history):
    bl, do, rv, dn = history["steps"]
    data = figures.aging(workflow, WINDOW, now=hours(12))
    assert data["items"] == [
        {"task_id": history["tasks"]["E"], "step_id": do.pk, "age_seconds": 10 * 3600, "percentile_band": ">95"}
    ]


@pytest.mark.parametrize(
    ("age_hours", "expected"), [(4.9, "<50"), (5, "50-85"), (7.8, "85-95"), (8.6, "85-95"), (9, ">95")]
)
def test_percentile_bands(age_hours, expected):
    cuts = {"50": 5 * 3600, "85": 7.8 * 3600, "95": 8.6 * 3600}
    assert figures.band(age_hours * 3600, cuts) == expected


def test_limit_ledger_shares_breaches_and_causes(workflow, history, owner):
    bl, do, rv, dn = history["steps"]
    forced = history["events"][("B", 5.5)]
    ledger = {row["name"]: row for row in figures.limits(workflow, WINDOW)["limits"]}
    assert list(ledger) == ["Doing", "Review", "Done"]  # Backlog has no limit
    review = ledger["Review"]
    assert review["at_limit_ratio"] == pytest.approx(4.5 / 13)
    assert review["over_limit_ratio"] == pytest.approx(1.5 / 13)
    assert review["never_reached"] is False
    lowered = {
        "event_id": None,
        "kind": "limit_lowered",
        "actor": None,
        "reason": "Admitted within the limit of the time; the limit is lower now.",
    }
    assert review["breaches"] == [
        {
            "started_at": hours(5.5),
            "ended_at": hours(6),
            "max_over": 1,
            "causes": [{"event_id": forced.pk, "kind": "forced", "actor": "olivia", "reason": "hotfix"}],
        },
        {"started_at": hours(7), "ended_at": hours(8), "max_over": 1, "causes": [lowered]},
    ]
    doing = ledger["Doing"]
    assert doing["at_limit_ratio"] == pytest.approx(1.5 / 13)
    assert doing["over_limit_ratio"] == pytest.approx(2 / 13)
    assert [(b["started_at"], b["ended_at"]) for b in doing["breaches"]] == [(hours(2), hours(3)), (hours(4), hours(5))]
    done = ledger["Done"]
    assert (done["never_reached"], done["at_limit_ratio"], done["breaches"]) == (True, 0, [])


def test_a_breach_still_going_on_has_no_end(workflow, history, owner):
    bl, do, rv, dn = history["steps"]
    for at, reason in ((10.5, "urgent"), (11.5, "again")):
        TaskEventFactory(
            workflow=workflow,
            kind="forced",
            from_step_id=bl.pk,
            to_step_id=rv.pk,
            actor=owner,
            reason=reason,
            at=hours(at),
        )
    review = next(r for r in figures.limits(workflow, WINDOW)["limits"] if r["name"] == "Review")
    got = [(b["started_at"], b["ended_at"], [c["reason"] for c in b["causes"]]) for b in review["breaches"][-2:]]
    assert got == [(hours(10.5), hours(11), ["urgent"]), (hours(11.5), None, ["again"])]


def test_a_breach_going_on_at_the_window_start_is_shown_from_there(workflow, history):
    ledger = figures.limits(workflow, Window(hours(5.75), hours(12)))["limits"]
    review = next(r for r in ledger if r["name"] == "Review")
    first = review["breaches"][0]
    assert (first["started_at"], first["ended_at"], first["causes"]) == (hours(5.75), hours(6), [])
    assert review["over_limit_ratio"] == pytest.approx((0.25 + 1) / 6.25)


def test_a_task_leaving_a_full_step_as_another_enters_is_no_breach(workflow):
    """Changes at one instant are one change: the step stays at its limit."""
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, kind="backlog")
    doing = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=1)
    leaving, entering = uuid.uuid4(), uuid.uuid4()
    TaskEventFactory(workflow=workflow, task_id=leaving, kind="created", to_step_id=doing.pk, at=hours(-1))
    TaskEventFactory(workflow=workflow, task_id=entering, kind="created", to_step_id=backlog.pk, at=hours(-1))
    for task, src, dst in ((leaving, doing, backlog), (entering, backlog, doing)):
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="moved", from_step_id=src.pk, to_step_id=dst.pk, at=hours(1)
        )
    (row,) = figures.limits(workflow, Window(hours(0), hours(2)))["limits"]
    assert (row["at_limit_ratio"], row["over_limit_ratio"], row["breaches"]) == (1.0, 0.0, [])
