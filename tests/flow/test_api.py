"""The `/flow/` endpoints: parameters, CSV, the last CFD point against the live board, and
query counts that do not grow with the history."""

import csv
import io
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from boards.admission import task_archive, task_move
from boards.services import task_block
from boards.snapshots import board_snapshot
from boards.structure import step_update
from tests.flow.factories import TaskEventFactory
from tests.flow.history import ENDPOINTS

T0 = datetime(2024, 3, 1, tzinfo=UTC)


def url(workflow, name, **params):
    query = "&".join(f"{k}={v}" for k, v in params.items())
    return f"/api/v1/workflows/{workflow.pk}/flow/{name}/" + (f"?{query}" if query else "")


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_window_over_366_days_is_refused_with_field_errors(api, workflow, board, name):
    response = api.get(url(workflow, name, **{"from": "2023-01-01T00:00:00Z", "to": "2024-01-03T00:00:00Z"}))
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["errors"]) == {"from", "to"}


@pytest.mark.parametrize("name", ENDPOINTS)
def test_bad_parameters_are_400_never_500(api, workflow, board, name):
    for params in ({"from": "yesterday"}, {"from": "2024-01-02T00:00:00Z", "to": "2024-01-01T00:00:00Z"}):
        response = api.get(url(workflow, name, **params))
        assert response.status_code == 400, params
        assert response.json()["code"] == "invalid"


@pytest.mark.parametrize("name", ENDPOINTS)
@pytest.mark.parametrize(
    "params",
    [
        {"to": "0001-01-02"},  # the default window would start before year 1
        {"from": "0001-01-01T00:00:00Z", "to": "0001-01-02T00:00:00Z"},
        {"from": "0001-01-01T00:30:00+01:00"},  # before year 1 once in UTC
        {"from": "9999-12-30T00:00:00Z", "to": "9999-12-31T23:59:59-01:00"},  # after year 9999 in UTC
    ],
)
def test_instants_at_the_ends_of_the_calendar_are_field_errors_not_500(api, workflow, board, name, params):
    response = api.get(url(workflow, name, **params))
    assert response.status_code == 400, response.content
    body = response.json()
    assert body["code"] == "invalid"
    assert set(body["errors"]) <= {"from", "to"} and body["errors"]


def test_an_unknown_interval_is_a_field_error(api, workflow, board):
    assert api.get(url(workflow, "cfd", interval="week")).json()["errors"].keys() == {"interval"}
    assert api.get(url(workflow, "throughput", interval="hour")).json()["errors"].keys() == {"interval"}


def test_the_window_defaults_to_the_last_30_days(api, workflow, board):
    points = api.get(url(workflow, "cfd")).json()["points"]
    first, last = (datetime.fromisoformat(points[i]["at"]) for i in (0, -1))
    assert last - first == timedelta(days=30)
    assert len(points) == 31


@pytest.mark.parametrize("name", ENDPOINTS)
def test_an_unknown_parameter_is_a_field_error(api, workflow, board, name):
    response = api.get(url(workflow, name, form="2024-01-01"))
    assert response.status_code == 400
    assert response.json()["errors"] == {"form": ["Unknown query parameter."]}


def test_an_unknown_board_is_404(api):
    response = api.get(f"/api/v1/workflows/{uuid.uuid4()}/flow/cfd/")
    assert response.status_code == 404


def test_csv_has_one_row_per_point(api, workflow, board, make_task):
    backlog, doing, done = board
    make_task(doing, "one")
    cfd = list(csv.reader(io.StringIO(api.get(url(workflow, "cfd", format="csv")).content.decode())))
    assert cfd[0] == ["at", "Backlog", "In Progress", "Done"]
    assert cfd[-1][1:4] == ["1", "1", "0"]  # created in In Progress: arrived there and, by passing, before it
    response = api.get(url(workflow, "wip", format="csv"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == [
        "at",
        "Backlog",
        "In Progress",
        "Done",
        "Backlog (queued)",
        "In Progress (queued)",
        "Done (queued)",
    ]
    assert len(rows) == 1 + 31
    assert rows[-1][1:4] == ["0", "1", "0"]


@pytest.mark.parametrize("name", ENDPOINTS)
def test_every_endpoint_answers_csv_and_errors_stay_json(api, workflow, board, make_task, owner, name):
    backlog, doing, done = board
    task, aging = make_task(doing), make_task(doing)  # one finishes, one ages, blocked
    task_move(task=task, to_step=done, actor=None)
    task_block(task=aging, actor=owner, reason="waiting on review")
    step_update(step=doing, actor=owner, wip_limit=3)  # a row of the configuration history
    response = api.get(url(workflow, name, format="csv"))
    assert response.status_code == 200
    assert len(list(csv.reader(io.StringIO(response.content.decode())))) >= 2
    error = api.get(url(workflow, name, format="csv", **{"from": "nonsense"}))
    assert (error.status_code, error["Content-Type"]) == (400, "application/json")


@pytest.mark.parametrize("name", ENDPOINTS)
def test_options_describes_the_view_in_json_even_when_csv_is_asked_for(api, workflow, board, name):
    response = api.options(url(workflow, name, format="csv"))
    assert (response.status_code, response["Content-Type"]) == (200, "application/json")


def test_the_last_wip_point_is_the_board_at_that_instant(api, workflow, board, make_task, owner):
    backlog, doing, done = board
    doing.on_full = "queue"
    doing.save()
    tasks = [make_task(backlog, f"t{i}") for i in range(6)]  # two are pulled into In Progress
    task_move(task=tasks[4], to_step=doing, actor=owner)  # queued
    task_move(task=tasks[2], to_step=done, actor=owner, force=True, reason="shortcut")
    task_archive(task=tasks[5], actor=owner)
    task_move(task=tasks[0], to_step=done, actor=owner)  # opens room: the queued one is promoted
    snapshot = board_snapshot(workflow=workflow)
    last = api.get(url(workflow, "wip")).json()["points"][-1]
    assert last["counts"] == {str(s["id"]): s["occupied"] for s in snapshot["steps"]}
    assert last["queued"] == {str(s["id"]): s["queued"] for s in snapshot["steps"]}


def _history(workflow, steps, tasks: int):
    """`tasks` tasks, each created in the first step, moved through the others one hour apart."""
    for n in range(tasks):
        task = uuid.uuid4()
        TaskEventFactory(
            workflow=workflow, task_id=task, kind="created", to_step_id=steps[0].pk, at=T0 + timedelta(minutes=n)
        )
        for i, (src, dst) in enumerate(zip(steps, steps[1:], strict=False)):
            TaskEventFactory(
                workflow=workflow,
                task_id=task,
                kind="moved",
                from_step_id=src.pk,
                to_step_id=dst.pk,
                at=T0 + timedelta(minutes=n, hours=i + 1),
            )


# Every figure reads its board's stamp first (flow/cache.py: the answer kept per board
# version) and, when it is not kept, counts the window's events, up to their bound
# (flow/bounds.py); cycle-times and efficiency read the finished tasks' blocked/unblocked
# events in one more query (the others' cycle times leave them out).
QUERIES = {
    "cfd": 6,
    "wip": 7,  # and the limits in force
    "sle": 9,  # and the owner-set service levels
    # and the groups, lanes, cells, members, the limits in force, the periods at each limit
    "advice": 15,
    "blockers": 7,  # the blocks, then the capacity the active steps held and each type's part of it
    "efficiency": 8,
    "cycle-times": 8,  # and the board's lanes, for the per-lane summary
    "throughput": 6,
    "aging": 7,
    "limits": 13,  # the groups, lanes, cells, members, the limits in force, the lowerings (flow/config.py)
    "limit-changes": 3,  # not kept, no events counted: the changes counted, an empty page not read
    "queues": 7,
}


@pytest.mark.parametrize("name", ENDPOINTS)
def test_query_counts_do_not_grow_with_the_history(api, workflow, board, django_assert_num_queries, name):
    window = {"from": "2024-02-28T00:00:00Z", "to": "2024-03-03T00:00:00Z"}
    api.get(url(workflow, name, **window))  # warm the session and content types
    for tasks in (1, 30):
        _history(workflow, board, tasks)
        # The workflow, the caller's role, the steps, the events' count, then the figure's own statements.
        with django_assert_num_queries(QUERIES[name]):
            response = api.get(url(workflow, name, **window))
        assert response.status_code == 200
