"""SLEs, limit advice, blocker clusters and flow efficiency against values computed by hand
from tests/flow/conftest.py's `history` (window: hour -1 to 12, 13 hours).

Cycle times: C 2 h (X at 2 -> Done at 4), A 5 h (1 -> 6), B 9 h (2 -> 11)."""

import csv
import io
import uuid

import pytest

from boards.models import Task
from flow import analytics
from tests.flow.factories import TaskEventFactory
from tests.flow.history import WINDOW, hours
from workflows.models import StepGroup, WorkflowStep

WINDOW_DAYS = 13 / 24


def test_the_sle_is_the_85th_percentile_of_each_class_at_its_finish(workflow, history):
    t = history["tasks"]
    assert analytics.sle(workflow, WINDOW)["sles"] == [
        {
            "class_of_service": "standard",
            "days": 1,
            "cycle_seconds": pytest.approx(7.8 * 3600),
            "percentile": 85,
            "sample": 3,
            "set_by": "history",
        },
        {
            "class_of_service": "expedite",
            "days": None,
            "cycle_seconds": None,
            "percentile": 85,
            "sample": 0,
            "set_by": "history",
        },
    ]
    # B became expedite before it finished; C after (so it finished standard); A is expedite
    # now and was never reclassified (so it always was).
    for task, at in (("B", 10.5), ("C", 5)):
        TaskEventFactory(
            workflow=workflow, task_id=t[task], kind="classified", at=hours(at), detail={"class_of_service": "expedite"}
        )
    Task.objects.filter(pk__in=[t["A"], t["B"], t["C"]]).update(class_of_service="expedite")
    standard, expedite = analytics.sle(workflow, WINDOW)["sles"]
    assert (standard["sample"], standard["cycle_seconds"], standard["days"]) == (1, 2 * 3600, 1)
    assert (expedite["sample"], expedite["cycle_seconds"]) == (2, pytest.approx(8.4 * 3600))


def test_limit_advice_by_littles_law(workflow, history):
    """Doing holds A 1-3 and 4-5, B 2-5.5, E 2-12: 16.5 task-hours; A leaves at 3 and 5, B
    at 5.5. The group of Doing and Review also holds Review's 7.5 task-hours (A 3-4, 5-6,
    7-8; B 5.5-9, 10-11); a move between its steps is no departure: A at 6 and 8, B
    archived at 9 and at 11. SLE 1 day, average cycle (2 + 5 + 9) / 3 = 16/3 hours."""
    bl, do, rv, dn = history["steps"]
    group = StepGroup.objects.create(workflow=workflow, name="Doing and Review", wip_limit=3)
    WorkflowStep.objects.filter(pk__in=[do.pk, rv.pk]).update(group=group)
    data = analytics.advice(workflow, WINDOW)
    assert (data["sle_days"], data["avg_cycle_days"]) == (1, pytest.approx(16 / 3 / 24))
    rows = {row["name"]: row for row in data["limits"]}
    assert list(rows) == ["Doing", "Review", "Done", "Doing and Review"]
    doing = rows["Doing"]
    assert (doing["scope"], doing["id"], doing["limit"]) == ("step", str(do.pk), 2)
    assert doing["avg_wip"] == pytest.approx(16.5 / 13)
    assert doing["throughput_per_day"] == pytest.approx(3 / WINDOW_DAYS)
    assert doing["avg_cycle_days"] == pytest.approx(5.5 / 24)
    assert doing["suggested_limit"] == 6  # 16.5/13 × 24 / (16/3) = 5.71
    assert doing["arithmetic"].startswith("5.54 tasks/day × 1.03 days = 5.71, rounded up to 6")
    review = rows["Review"]
    assert (review["avg_wip"], review["throughput_per_day"]) == (
        pytest.approx(7.5 / 13),
        pytest.approx(5 / WINDOW_DAYS),
    )
    done = rows["Done"]  # C 4-12, A 6-7 and 8-12, B 11-12; A left at 7
    assert (done["avg_wip"], done["throughput_per_day"]) == (pytest.approx(14 / 13), pytest.approx(1 / WINDOW_DAYS))
    both = rows["Doing and Review"]
    assert (both["scope"], both["limit"]) == ("group", 3)
    assert both["avg_wip"] == pytest.approx(24 / 13)
    assert both["throughput_per_day"] == pytest.approx(4 / WINDOW_DAYS)
    assert both["avg_cycle_days"] == pytest.approx(6 / 24)
    assert both["suggested_limit"] == 9  # 24/13 × 4.5 = 8.3


def test_advice_without_finished_tasks_suggests_nothing(workflow, history):
    early = type(WINDOW)(hours(-1), hours(3.5))  # A left Doing at 3; nothing finished
    doing = analytics.advice(workflow, early)["limits"][0]
    assert (doing["name"], doing["suggested_limit"]) == ("Doing", None)
    assert doing["arithmetic"] == "No finished task in the window: no SLE to aim at."


def block(workflow, task, kind, at, reason=""):
    TaskEventFactory(workflow=workflow, task_id=task, kind=kind, at=hours(at), reason=reason)


def test_blocks_are_clustered_by_reason_with_their_time_in_the_window(workflow, history):
    t = history["tasks"]
    block(workflow, t["C"], "blocked", -5, "vendor")  # over before the window
    block(workflow, t["C"], "unblocked", -4)
    block(workflow, t["B"], "blocked", -3, "vendor")  # 0.5 h inside, 2.5 h long
    block(workflow, t["B"], "unblocked", -0.5)
    block(workflow, t["A"], "blocked", 0.5, "waiting on ops")  # 1 h
    block(workflow, t["A"], "unblocked", 1.5)
    block(workflow, t["A"], "blocked", 2, "Waiting  on OPS")  # 0.5 h, then a new reason
    block(workflow, t["A"], "blocked", 2.5, "vendor")  # 0.5 h
    block(workflow, t["A"], "unblocked", 3)
    block(workflow, t["E"], "blocked", 10, "vendor")  # still blocked: 2 h to the window's end
    assert analytics.blockers(workflow, WINDOW)["blockers"] == [
        {
            "reason": "vendor",
            "count": 3,
            "blocked_days": pytest.approx(3 / 24),
            "median_seconds": 1.5 * 3600,
            "ongoing": 1,
        },
        {
            "reason": "waiting on ops",
            "count": 2,
            "blocked_days": pytest.approx(1.5 / 24),
            "median_seconds": 0.75 * 3600,
            "ongoing": 0,
        },
    ]


def typed_block(workflow, task, at, type_id=None, name=None, reason="x"):
    typed = {"type_id": str(type_id), "type": name} if type_id else {}
    TaskEventFactory(workflow=workflow, task_id=task, kind="blocked", at=hours(at), reason=reason, detail=typed)


def test_blocker_types_count_held_time_and_the_capacity_each_held(workflow, history):
    """Slot-days of the active steps in the window: A 6 h (Doing 1-3 and 4-5, Review 3-4,
    5-6 and 7-8), B 8 h (Doing 2-5.5, Review 5.5-9 and 10-11), C 2 h (the deleted step X
    2-4, counted as active), E 10 h (Doing 2-12): 26 h. A block's capacity is its time while
    the task held one of those slots."""
    t = history["tasks"]
    vendor, env = uuid.uuid4(), uuid.uuid4()
    typed_block(workflow, t["A"], 0.5, vendor, "Vendor")  # 1 h, in Backlog until 1: 0.5 h held a slot
    block(workflow, t["A"], "unblocked", 1.5)
    typed_block(workflow, t["A"], 2, env, "Environment")  # 0.5 h in Doing
    typed_block(workflow, t["A"], 2.5)  # a new block without a type: 1 h, in Doing then Review
    block(workflow, t["A"], "unblocked", 3.5)
    typed_block(workflow, t["C"], 0)  # 3 h: Backlog 0-2, X 2-3
    block(workflow, t["C"], "unblocked", 3)
    typed_block(workflow, t["E"], 10, vendor, "Supplier")  # renamed since; ongoing, 2 h to the end, in Doing
    data = analytics.blockers(workflow, WINDOW)
    assert data["occupied_days"] == pytest.approx(26 / 24)
    assert data["types"] == [
        {
            "type_id": None,
            "name": None,
            "count": 2,
            "held_days": pytest.approx(4 / 24),
            "median_seconds": 2 * 3600,
            "ongoing": 0,
            "capacity_days": pytest.approx(2 / 24),
            "capacity_share": pytest.approx(2 / 26),
        },
        {
            "type_id": str(vendor),
            "name": "Supplier",  # the name its latest block recorded
            "count": 2,
            "held_days": pytest.approx(3 / 24),
            "median_seconds": 3600,
            "ongoing": 1,
            "capacity_days": pytest.approx(2.5 / 24),
            "capacity_share": pytest.approx(2.5 / 26),
        },
        {
            "type_id": str(env),
            "name": "Environment",
            "count": 1,
            "held_days": pytest.approx(0.5 / 24),
            "median_seconds": 1800,
            "ongoing": 0,
            "capacity_days": pytest.approx(0.5 / 24),
            "capacity_share": pytest.approx(0.5 / 26),
        },
    ]


def test_without_blocks_or_occupied_slots_there_is_no_share(workflow, history):
    before = type(WINDOW)(hours(-3), hours(-2))
    assert analytics.blockers(workflow, before) == {"blockers": [], "types": [], "occupied_days": 0}


def test_flow_efficiency_is_working_time_over_lead_time(workflow, history):
    """A: lead 0-6, in Doing or Review 1-6 (5 h); C: lead 0-4, in the deleted step X 2-4
    (a step without a kind left counts as active); B: lead 2-11, Doing 2-5.5, Review 5.5-9
    then archived, restored into Review 10-11 (8 h). A was blocked 1.5 h of its cycle."""
    t = history["tasks"]
    block(workflow, t["A"], "blocked", 0.5, "ops")  # 0.5 h inside its cycle
    block(workflow, t["A"], "unblocked", 1.5)
    block(workflow, t["A"], "blocked", 2, "ops")
    block(workflow, t["A"], "unblocked", 3)
    data = analytics.efficiency(workflow, WINDOW)
    got = {
        i["title"]: (i["lead_seconds"] / 3600, i["active_seconds"] / 3600, i["working_seconds"] / 3600, i["efficiency"])
        for i in data["items"]
    }
    assert got == {
        "C": (4, 2, 2, 0.5),
        "A": (6, 5, 3.5, pytest.approx(3.5 / 6)),
        "B": (9, 8, 8, pytest.approx(8 / 9)),
    }
    assert data["items"][1]["waiting_seconds"] == 2.5 * 3600
    assert data["efficiency"] == pytest.approx(13.5 / 19)
    assert data["percentiles"]["50"] == pytest.approx(3.5 / 6)


def test_the_blockers_csv_has_the_reasons_then_the_types(api, workflow, history):
    t = history["tasks"]
    vendor = uuid.uuid4()
    typed_block(workflow, t["E"], 10, vendor, "=Vendor", reason="supplier")  # 2 h, all in Doing
    typed_block(workflow, t["C"], 0, reason="setup")  # 3 h, 1 h of it in X
    block(workflow, t["C"], "unblocked", 3)
    window = "from=2024-02-29T23:00:00Z&to=2024-03-01T12:00:00Z"
    response = api.get(f"/api/v1/workflows/{workflow.pk}/flow/blockers/?{window}&format=csv")
    rows = list(csv.reader(io.StringIO(response.content.decode(), newline="")))
    assert rows == [
        [
            "reason",
            "count",
            "blocked_days",
            "median_seconds",
            "ongoing",
            "type",
            "type_id",
            "capacity_days",
            "capacity_share",
        ],
        ["setup", "1", str(3 / 24), "10800.0", "0", "", "", "", ""],
        ["supplier", "1", str(2 / 24), "", "1", "", "", "", ""],
        ["", "1", str(3 / 24), "10800.0", "0", "No type", "", str(1 / 24), str(1 / 26)],
        ["", "1", str(2 / 24), "", "1", "'=Vendor", str(vendor), str(2 / 24), str(2 / 26)],
    ]
