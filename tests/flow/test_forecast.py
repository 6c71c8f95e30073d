"""`GET /flow/forecast/`: Monte Carlo over the daily throughput of histories written event
by event, with a seed, and its bounds."""

import uuid
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from flow import forecast as forecasting
from flow.serializers import utc_today
from tests.flow.factories import TaskEventFactory

T0 = datetime(2024, 3, 1, tzinfo=UTC)
DAY = timedelta(days=1)
HISTORY = {"from": "2024-03-01T00:00:00Z", "to": "2024-03-31T00:00:00Z"}  # 30 whole days


def url(workflow, **params):
    return f"/api/v1/workflows/{workflow.pk}/flow/forecast/", params


def finish(workflow, board, at):
    """A task created in In Progress an hour before `at` that reaches Done at `at`."""
    backlog, doing, done = board
    task = uuid.uuid4()
    TaskEventFactory(workflow=workflow, task_id=task, kind="created", to_step_id=doing.pk, at=at - timedelta(hours=1))
    TaskEventFactory(workflow=workflow, task_id=task, kind="moved", from_step_id=doing.pk, to_step_id=done.pk, at=at)


@pytest.fixture
def two_a_day(workflow, board):
    for day in range(30):
        for hour in (2, 23):
            finish(workflow, board, T0 + day * DAY + timedelta(hours=hour))
    finish(workflow, board, T0 + 30 * DAY)  # at the end instant: the next day, not drawn


def get(api, workflow, **params):
    path, query = url(workflow, **HISTORY, **params)
    return api.get(path, query)


def test_a_constant_throughput_gives_every_trial_the_same_answer(api, workflow, two_a_day):
    today = utc_today()
    body = get(api, workflow, items=9, seed=7).json()
    assert body["percentiles"] == {"50": 5, "85": 5, "95": 5}  # 2, 4, 6, 8, 10 >= 9
    assert body["dates"] == {p: (today + 5 * DAY).isoformat() for p in ("50", "85", "95")}
    assert body["histogram"] == [{"value": 5, "trials": 10_000}]
    assert (body["trials"], body["seed"], body["beyond"], body["start"]) == (10_000, 7, 0, today.isoformat())
    assert body["history"] == {
        "from": "2024-03-01T00:00:00+00:00",
        "to": "2024-03-31T00:00:00+00:00",
        "days": 30,
        "finished": 60,
        "throughput_per_day": 2.0,
    }
    body = get(api, workflow, until=(today + 10 * DAY).isoformat()).json()
    assert body["percentiles"] == {"50": 20, "85": 20, "95": 20}
    assert body["histogram"] == [{"value": 20, "trials": 10_000}]
    assert body["dates"] is None


def test_the_same_seed_gives_the_same_answer_and_percentiles_are_ordered(api, workflow, board):
    for day, finished in enumerate([0, 1, 3, 0, 2, 5, 1, 0, 0, 4] * 3):
        for n in range(finished):
            finish(workflow, board, T0 + day * DAY + timedelta(hours=2 + n))
    first = get(api, workflow, items=40, seed=12345, trials=20_000).json()
    assert first == get(api, workflow, items=40, seed=12345, trials=20_000).json()
    assert first["histogram"] != get(api, workflow, items=40, seed=54321, trials=20_000).json()["histogram"]
    p = first["percentiles"]
    assert 40 / 5 <= p["50"] <= p["85"] <= p["95"]  # days: more confidence, later
    assert sum(bar["trials"] for bar in first["histogram"]) == 20_000
    until = (utc_today() + 30 * DAY).isoformat()
    p = get(api, workflow, until=until, seed=1).json()["percentiles"]
    assert p["50"] >= p["85"] >= p["95"] >= 0  # tasks: more confidence, fewer
    # 30 days at a mean of 1.6 a day: 48 on average.
    assert 40 <= p["50"] <= 56


def test_percentiles_read_as_confidence():
    outcomes = np.arange(1, 101)  # 1..100, one trial each
    assert forecasting.at_confidence(outcomes, 85, more_is_better=False) == 85  # 85 trials within 85 days
    assert forecasting.at_confidence(outcomes, 85, more_is_better=True) == 16  # 85 trials reached 16..100
    assert forecasting.at_confidence(outcomes, 50, more_is_better=True) == 51


def test_without_a_finished_task_no_trial_finishes(api, workflow, board):
    body = get(api, workflow, items=3, seed=1).json()
    assert body["percentiles"] == {"50": None, "85": None, "95": None}
    assert (body["beyond"], body["histogram"]) == (10_000, [])
    body = get(api, workflow, until=(utc_today() + DAY).isoformat(), seed=1).json()
    assert body["percentiles"] == {"50": 0, "85": 0, "95": 0}


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({}, {"items", "until"}),
        ({"items": 3, "until": "2999-01-01"}, {"items", "until"}),
        ({"items": 0}, {"items"}),
        ({"items": forecasting.MAX_ITEMS + 1}, {"items"}),
        ({"items": "many"}, {"items"}),
        ({"items": 3, "trials": forecasting.MIN_TRIALS - 1}, {"trials"}),
        ({"items": 3, "trials": forecasting.MAX_TRIALS + 1}, {"trials"}),
        ({"items": 3, "seed": -1}, {"seed"}),
        ({"until": "yesterday"}, {"until"}),
        ({"until": "2024-01-01"}, {"until"}),
        ({"until": (datetime.now(UTC) + (forecasting.MAX_DAYS + 2) * DAY).date().isoformat()}, {"until"}),
        ({"items": 3, "from": "2024-03-01T00:00:00Z", "to": "2024-03-01T23:00:00Z"}, {"from", "to"}),
        ({"item": 3}, {"item"}),
    ],
)
def test_bad_questions_are_field_errors(api, workflow, board, params, fields):
    path, _ = url(workflow)
    response = api.get(path, params)
    assert response.status_code == 400, response.content
    assert set(response.json()["errors"]) >= fields


def test_the_histogram_as_csv(api, workflow, two_a_day):
    path, query = url(workflow, **HISTORY, items=9, seed=1, format="csv")
    response = api.get(path, query)
    assert response.content.decode().splitlines() == ["days,trials", "5,10000"]


def test_a_slow_board_is_more_than_five_years_without_simulating_it(workflow, board):
    finish(workflow, board, T0 + timedelta(hours=5))  # one task in 30 days
    rng = np.random.default_rng(1)
    days = forecasting.days_until_done([1] + [0] * 29, forecasting.MAX_ITEMS, 10_000, rng)
    assert (days == forecasting.MAX_DAYS + 1).all()
