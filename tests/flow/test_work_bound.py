"""One flow request's work is bounded, not only its window: the points a
chart would draw (instants x steps) and the history events a window holds. Above either
bound the request is a 400 with field errors saying what to narrow, decided before any
figure is computed. And the figures are throttled per user."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.core.cache import cache

from flow.throttling import FlowThrottle
from tests.conftest import member_client
from tests.factories import StepFactory
from tests.flow.factories import TaskEventFactory
from tests.flow.history import ENDPOINTS, FIGURES
from workflows.models import Role

YEAR = {"from": "2024-01-01T00:00:00Z", "to": "2024-12-31T00:00:00Z"}  # 8,760 hours, 365 days


def url(workflow, name, **params):
    return f"/api/v1/workflows/{workflow.pk}/flow/{name}/?" + "&".join(f"{k}={v}" for k, v in params.items())


@pytest.fixture
def wide_board(workflow):
    """An empty board of 50 steps: the most a board may have."""
    return [StepFactory(workflow=workflow, name=f"Step {i}", position=i) for i in range(50)]


def test_an_hourly_cfd_over_a_year_of_50_steps_is_refused_saying_what_to_narrow(api, workflow, wide_board):
    response = api.get(url(workflow, "cfd", interval="hour", **YEAR))
    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "invalid"
    message = (
        "This chart would have 438,050 points (8,761 instants × 50 steps); the most is 100,000: "
        "choose a shorter window or interval=day."
    )
    assert body["errors"] == {"from": [message], "to": [message], "interval": [message]}


def test_the_same_year_by_day_and_the_longest_hourly_window_that_fits_are_served(api, workflow, wide_board):
    assert api.get(url(workflow, "cfd", interval="day", **YEAR)).status_code == 200
    # 1,999 instants x 50 steps = 99,950 points: 1,998 hours after `from`.
    fits = {"from": "2024-01-01T00:00:00Z", "to": "2024-03-24T06:00:00Z"}
    assert api.get(url(workflow, "cfd", interval="hour", **fits)).status_code == 200
    over = {"from": "2024-01-01T00:00:00Z", "to": "2024-03-24T08:00:00Z"}
    assert api.get(url(workflow, "cfd", interval="hour", **over)).status_code == 400


def test_the_points_bound_is_a_setting(api, workflow, board, settings):
    settings.KANDEV_FLOW_MAX_POINTS = 31 * 3
    assert (
        api.get(
            url(workflow, "cfd", interval="day", **{"from": "2024-01-01T00:00:00Z", "to": "2024-01-31T00:00:00Z"})
        ).status_code
        == 200
    )
    refused = api.get(
        url(workflow, "cfd", interval="day", **{"from": "2024-01-01T00:00:00Z", "to": "2024-02-01T00:00:00Z"})
    )
    assert refused.status_code == 400
    assert refused.json()["errors"]["from"] == [
        "This chart would have 96 points (32 instants × 3 steps); the most is 93: choose a shorter window."
    ]
    settings.KANDEV_FLOW_MAX_POINTS = 10
    daily = api.get(
        url(workflow, "throughput", interval="day", **{"from": "2024-01-01T00:00:00Z", "to": "2024-01-12T00:00:00Z"})
    )
    assert daily.json()["errors"]["interval"] == [
        "This chart would have 11 points (11 days); the most is 10: choose a shorter window or interval=week."
    ]


def history(workflow, step, events: int, at: datetime):
    """`events` tasks created in `step` one minute apart from `at`."""
    for n in range(events):
        TaskEventFactory(
            workflow=workflow, task_id=uuid.uuid4(), kind="created", to_step_id=step.pk, at=at + timedelta(minutes=n)
        )


@pytest.mark.parametrize("name", FIGURES)
def test_a_window_holding_more_history_than_the_bound_is_refused(api, workflow, board, settings, name):
    settings.KANDEV_FLOW_MAX_EVENTS = 5
    history(workflow, board[0], 6, datetime(2024, 3, 1, tzinfo=UTC))
    window = {"from": "2024-03-01T00:00:00Z", "to": "2024-03-02T00:00:00Z"}
    refused = api.get(url(workflow, name, **window))
    assert refused.status_code == 400
    message = "This window holds more than 5 events of the board's history; the most is 5: choose a shorter window."
    assert refused.json()["errors"] == {"from": [message], "to": [message]}
    narrower = {"from": "2024-03-01T00:01:00Z", "to": "2024-03-02T00:00:00Z"}  # five of the six
    assert api.get(url(workflow, name, **narrower)).status_code == 200


@pytest.mark.parametrize("name", ENDPOINTS)
def test_the_figures_are_throttled_per_user_with_the_api_error_body(api, owner, workflow, board, settings, name):
    settings.KANDEV_FLOW_RATE = "3/minute"
    other = member_client(workflow.workspace, Role.MEMBER)
    for user in (owner, other.handler._force_user):
        cache.delete(FlowThrottle().cache_format % {"scope": FlowThrottle.scope, "ident": user.pk})
    statuses = [api.get(url(workflow, name)).status_code for _ in range(3)]
    refused = api.get(url(workflow, name, format="csv"))
    assert statuses == [200, 200, 200]
    assert refused.status_code == 429
    assert refused.json()["code"] == "throttled"
    assert int(refused.headers["Retry-After"]) > 0
    assert other.get(url(workflow, name)).status_code == 200  # per user
