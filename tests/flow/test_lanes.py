"""Flow figures split by lane: `?lane=` on the charts (a task counts in the lane it is in
now), cycle times per lane, the ledger's lane and cell rows, and the lane and cell gauges.

The world (hours after T0), on Backlog (backlog) -> Doing (active) -> Done (done):
  lane A: P created in Backlog at 0, Doing at 1, Done at 3 (cycle 2 h, lead 3 h);
          S created in Backlog at 2, still there.
  lane B: Q created in Backlog at 0 (in lane A then: moved to B at 1, in its step),
          Doing at 2, Done at 6 (cycle 4 h, lead 6 h); R created in Doing at 1, still there.
  no lane: D created in Doing at 1, deleted at 4.
"""

import csv
import io
import uuid

import pytest

from tests.factories import StepFactory, WorkflowFactory
from tests.flow.factories import TaskEventFactory, TaskFactory
from tests.flow.history import hours
from workflows.models import Lane

HOURLY = {"from": "2024-03-01T00:00:00Z", "to": "2024-03-01T08:00:00Z", "interval": "hour"}


@pytest.fixture
def world(workflow):
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
    event("Q", "moved", 2, bl, do)
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
