"""Flow figures split by lane: `?lane=` on the charts (a task counts in the lane it is in
now), cycle times per lane, the ledger's lane and cell rows, and the lane and cell gauges.

The world (hours after T0), on Backlog (backlog) -> Doing (active) -> Done (done):
  lane A: P created in Backlog at 0, Doing at 1, Done at 3 (cycle 2 h, lead 3 h);
          S created in Backlog at 2, still there.
  lane B: Q created in Backlog at 0 (in lane A then: moved to B at 1, in its step),
          forced into Doing at 2 ("hotfix"), Done at 6 (cycle 4 h, lead 6 h); R created in
          Doing at 1, still there.
  no lane: D created in Doing at 1, deleted at 4.
"""

import csv
import io
import uuid
from datetime import datetime

import pytest

from tests.factories import StepFactory, WorkflowFactory
from tests.flow.factories import TaskEventFactory, TaskFactory
from tests.flow.history import hours
from workflows.models import ConfigChange, Lane, LaneCell

HOURLY = {"from": "2024-03-01T00:00:00Z", "to": "2024-03-01T08:00:00Z", "interval": "hour"}


@pytest.fixture
def world(workflow, owner):
    bl = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind="backlog")
    do = StepFactory(workflow=workflow, name="Doing", position=1)
    dn = StepFactory(workflow=workflow, name="Done", position=2, kind="done")
    a = workflow.lanes.get()
    a.name = "A"
    a.save()
    b = Lane.objects.create(workflow=workflow, name="B", position=1)
    tasks = {
        "P": TaskFactory(step=dn, lane=a, title="P"),
        "S": TaskFactory(step=bl, lane=a, title="S"),
        "Q": TaskFactory(step=dn, lane=b, title="Q"),
        "R": TaskFactory(step=do, lane=b, title="R"),
    }
    ids = {**{k: t.pk for k, t in tasks.items()}, "D": uuid.uuid4()}

    def event(task, kind, at, src=None, dst=None, **kwargs):
        TaskEventFactory(
            workflow=workflow,
            task_id=ids[task],
            kind=kind,
            at=hours(at),
            from_step_id=getattr(src, "pk", None),
            to_step_id=getattr(dst, "pk", None),
            **kwargs,
        )

    event("P", "created", 0, dst=bl)
    event("Q", "created", 0, dst=bl)
    event("P", "moved", 1, bl, do)
    event("Q", "moved", 1, bl, bl, detail={"lane_id": str(b.pk), "from_lane_id": str(a.pk)})
    event("R", "created", 1, dst=do)
    event("D", "created", 1, dst=do)
    event("S", "created", 2, dst=bl)
    event("Q", "forced", 2, bl, do, actor=owner, reason="hotfix")
    event("P", "moved", 3, do, dn)
    event("D", "deleted", 4, src=do, detail={"title": "D"})
    event("Q", "moved", 6, do, dn)
    return {"steps": (bl, do, dn), "lanes": (a, b), "tasks": ids}


def get(api, workflow, name, **params):
    response = api.get(f"/api/v1/workflows/{workflow.pk}/flow/{name}/", params)
    assert response.status_code == 200, response.content
    return response.json() if params.get("format") != "csv" else response.content.decode()


def lines(data, steps) -> list[list[int]]:
    """Each step's series of a CFD (`arrived`) or WIP (`counts`) answer."""
    key = "arrived" if "arrived" in data["points"][0] else "counts"
    return [[p[key][str(s.pk)] for p in data["points"]] for s in steps]


class TestCharts:
    def test_the_cfd_of_a_lane_counts_the_tasks_in_it_now(self, api, workflow, world):
        a, b = world["lanes"]
        assert lines(get(api, workflow, "cfd", lane=a.pk, **HOURLY), world["steps"]) == [
            [1, 1, 2, 2, 2, 2, 2, 2, 2],  # P from 0, S from 2
            [0, 1, 1, 1, 1, 1, 1, 1, 1],
            [0, 0, 0, 1, 1, 1, 1, 1, 1],
        ]
        # Q was in lane A until hour 1: it counts in B, where it is now, from its start.
        assert lines(get(api, workflow, "cfd", lane=b.pk, **HOURLY), world["steps"]) == [
            [1, 2, 2, 2, 2, 2, 2, 2, 2],
            [0, 1, 2, 2, 2, 2, 2, 2, 2],
            [0, 0, 0, 0, 0, 0, 1, 1, 1],
        ]
        # The lanes add up to the board (D, deleted unfinished, is on no line).
        assert lines(get(api, workflow, "cfd", **HOURLY), world["steps"]) == [
            [2, 3, 4, 4, 4, 4, 4, 4, 4],
            [0, 2, 3, 3, 3, 3, 3, 3, 3],
            [0, 0, 0, 1, 1, 1, 2, 2, 2],
        ]

    def test_the_wip_of_a_lane(self, api, workflow, world):
        a, b = world["lanes"]
        assert lines(get(api, workflow, "wip", lane=a.pk, **HOURLY), world["steps"]) == [
            [1, 0, 1, 1, 1, 1, 1, 1, 1],
            [0, 1, 1, 0, 0, 0, 0, 0, 0],
            [0, 0, 0, 1, 1, 1, 1, 1, 1],
        ]
        assert lines(get(api, workflow, "wip", lane=b.pk, **HOURLY), world["steps"]) == [
            [1, 1, 0, 0, 0, 0, 0, 0, 0],
            [0, 1, 2, 2, 2, 2, 1, 1, 1],
            [0, 0, 0, 0, 0, 0, 1, 1, 1],
        ]
        # The board's Doing also held D, in no lane, from 1 to 4.
        assert lines(get(api, workflow, "wip", **HOURLY), world["steps"])[1] == [0, 3, 4, 3, 2, 2, 1, 1, 1]

    def test_cycle_times_per_lane(self, api, workflow, world):
        a, b = world["lanes"]
        window = {"from": HOURLY["from"], "to": HOURLY["to"]}
        data = get(api, workflow, "cycle-times", **window)
        assert [(i["title"], i["lane_id"], i["cycle_seconds"], i["lead_seconds"]) for i in data["items"]] == [
            ("P", str(a.pk), 7200, 10800),
            ("Q", str(b.pk), 14400, 21600),
        ]
        assert data["percentiles"]["50"] == 10800
        assert data["lanes"] == [
            {"id": str(a.pk), "name": "A", "count": 1, "percentiles": {"50": 7200, "85": 7200, "95": 7200}},
            {"id": str(b.pk), "name": "B", "count": 1, "percentiles": {"50": 14400, "85": 14400, "95": 14400}},
        ]
        only_b = get(api, workflow, "cycle-times", lane=b.pk, **window)
        assert [i["title"] for i in only_b["items"]] == ["Q"]
        assert only_b["percentiles"]["50"] == 14400
        assert [row["count"] for row in only_b["lanes"]] == [0, 1]

    def test_throughput_of_a_lane(self, api, workflow, world):
        a, b = world["lanes"]
        window = {"from": "2024-03-01T00:00:00Z", "to": "2024-03-02T00:00:00Z"}
        assert get(api, workflow, "throughput", **window)["buckets"][0]["count"] == 2
        assert get(api, workflow, "throughput", lane=a.pk, **window)["buckets"][0]["count"] == 1
        assert get(api, workflow, "throughput", lane=b.pk, **window)["buckets"][0]["count"] == 1

    def test_aging_of_a_lane_against_its_own_cycle_times(self, api, workflow, world):
        a, b = world["lanes"]
        window = {"from": HOURLY["from"], "to": HOURLY["to"]}
        assert get(api, workflow, "aging", lane=a.pk, **window)["items"] == []
        only_b = get(api, workflow, "aging", lane=b.pk, **window)
        assert [i["task_id"] for i in only_b["items"]] == [str(world["tasks"]["R"])]
        assert only_b["percentiles"]["50"] == 14400  # Q's, not P's

    def test_csv_of_a_lane(self, api, workflow, world):
        a, b = world["lanes"]
        rows = list(csv.reader(io.StringIO(get(api, workflow, "cfd", lane=b.pk, format="csv", **HOURLY))))
        assert rows[0] == ["at", "Backlog", "Doing", "Done"]
        assert rows[-1][1:] == ["2", "2", "1"]
        window = {"from": HOURLY["from"], "to": HOURLY["to"]}
        rows = list(csv.reader(io.StringIO(get(api, workflow, "cycle-times", lane=a.pk, format="csv", **window))))
        assert [(r[1], r[2]) for r in rows[1:]] == [("P", str(a.pk))]


LANE_FIGURES = ["cfd", "wip", "cycle-times", "throughput", "aging"]


@pytest.mark.parametrize("name", LANE_FIGURES)
def test_a_lane_of_another_board_or_none_at_all_is_a_field_error(api, workflow, world, name):
    other = WorkflowFactory(workspace=workflow.workspace).lanes.get()
    for lane in (other.pk, uuid.uuid4(), "nonsense", ""):
        response = api.get(f"/api/v1/workflows/{workflow.pk}/flow/{name}/", {"lane": lane})
        assert response.status_code == 400, (lane, response.content)
        assert response.json()["errors"].keys() == {"lane"}


@pytest.mark.parametrize("name", ["limits", "queues", "sle", "advice", "blockers", "efficiency"])
def test_the_other_figures_take_no_lane(api, workflow, world, name):
    a, b = world["lanes"]
    response = api.get(f"/api/v1/workflows/{workflow.pk}/flow/{name}/", {"lane": a.pk})
    assert response.status_code == 400
    assert response.json()["errors"] == {"lane": ["Unknown query parameter."]}


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _change(workflow, scope, subject_id, at, before, after, actor=None):
    ConfigChange.objects.create(
        workspace_id=workflow.workspace_id,
        workflow=workflow,
        scope=scope,
        subject_id=subject_id,
        name=subject_id,
        field="wip_limit",
        before=before,
        after=after,
        actor=actor,
        at=hours(at),
    )


class TestLedger:
    """Lane B (limit 1 today) was limited to 2 until olivia lowered it at hour 4; it holds in
    Doing R from 1 and Q from 2 to 6. Cell A x Doing got a limit of 1 at hour 2 (P there from
    1 to 3); cell B x Doing has had 1 all along."""

    @pytest.fixture
    def ledger(self, api, workflow, world, owner):
        a, b = world["lanes"]
        bl, do, dn = world["steps"]
        b.wip_limit = 1
        b.save()
        _change(workflow, "lane", str(b.pk), 4, 2, 1, actor=owner)
        LaneCell.objects.create(lane=a, step=do, wip_limit=1)
        _change(workflow, "cell", f"{a.pk}:{do.pk}", 2, None, 1, actor=owner)
        LaneCell.objects.create(lane=b, step=do, wip_limit=1)
        return get(api, workflow, "limits", **{"from": HOURLY["from"], "to": HOURLY["to"]})["limits"]

    def test_one_row_per_lane_and_cell_limited_in_the_window(self, ledger, world):
        a, b = world["lanes"]
        do = world["steps"][1]
        assert [(r["scope"], r["id"], r["name"], r["limit"]) for r in ledger] == [
            ("lane", str(b.pk), "B", 1),
            ("cell", f"{a.pk}:{do.pk}", "A × Doing", 1),
            ("cell", f"{b.pk}:{do.pk}", "B × Doing", 1),
        ]

    def test_a_lane_is_judged_by_the_limit_in_force_then(self, ledger):
        lane = ledger[0]
        # 2 of 2 from 2 to 4, then 2 of 1 until 6 (over), then 1 of 1 to the end.
        assert (lane["at_limit_ratio"], lane["over_limit_ratio"], lane["never_reached"]) == (4 / 8, 2 / 8, False)
        (breach,) = lane["breaches"]
        assert (at(breach["started_at"]), at(breach["ended_at"]), breach["max_over"]) == (hours(4), hours(6), 1)
        assert breach["causes"] == [
            {"event_id": None, "kind": "limit_lowered", "actor": "olivia", "reason": "Limit lowered from 2 to 1."}
        ]

    def test_cells_count_their_lane_s_tasks_in_their_step(self, ledger):
        added, always = ledger[1], ledger[2]
        # A x Doing: unlimited until 2, then P alone until 3.
        assert (added["at_limit_ratio"], added["over_limit_ratio"], added["breaches"]) == (1 / 8, 0, [])
        # B x Doing: R alone 1-2 and 6-8; R and Q (forced in) 2-6.
        assert (always["at_limit_ratio"], always["over_limit_ratio"]) == (3 / 8, 4 / 8)
        (breach,) = always["breaches"]
        assert (at(breach["started_at"]), at(breach["ended_at"])) == (hours(2), hours(6))
        assert [(c["kind"], c["actor"], c["reason"]) for c in breach["causes"]] == [("forced", "olivia", "hotfix")]

    def test_the_wip_of_a_lane_shows_its_cell_limits_in_force(self, api, workflow, world, ledger):
        a, b = world["lanes"]
        do = world["steps"][1]

        def doing_limits(lane):
            return [p["limits"][str(do.pk)] for p in get(api, workflow, "wip", lane=lane.pk, **HOURLY)["points"]]

        assert doing_limits(a) == [0, 0, 1, 1, 1, 1, 1, 1, 1]
        assert doing_limits(b) == [1] * 9

    def test_the_ledger_csv_names_each_scope(self, api, workflow, world, ledger):
        text = get(api, workflow, "limits", format="csv", **{"from": HOURLY["from"], "to": HOURLY["to"]})
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [(r["scope"], r["name"]) for r in rows] == [("lane", "B"), ("cell", "A × Doing"), ("cell", "B × Doing")]
