""" "When will these be done?" over MCP: `get_task` carries a waiting task's forecast and an
active task's age against its service level, and `forecast` answers for the board as
`GET .../flow/forecast/` does."""

from datetime import date, timedelta

import anyio
import pytest
from django.utils import timezone

from integrations.mcp_tools import build_server
from tests.factories import UserFactory, board
from tests.flow.factories import finished_history

pytestmark = pytest.mark.django_db(transaction=True)


def call(user, tool, **arguments):
    return anyio.run(build_server(user_id=user.pk).call_tool, tool, arguments)


@pytest.fixture
def waiting_board(workflow, make_task):
    """In Progress (limit 2, pulls from Backlog) is full; two tasks wait in Backlog; one
    task a day finished over the last 30 days."""
    steps = board(workflow)
    backlog, doing, done = steps
    busy = [make_task(doing, "busy 1"), make_task(doing, "busy 2")]
    waiting = [make_task(backlog, "next"), make_task(backlog, "after it")]
    finished_history(workflow, steps, 30, timezone.now())
    return steps, busy, waiting


def test_get_task_tells_when_a_waiting_task_will_start_and_be_done(owner, waiting_board):
    steps, busy, (first, second) = waiting_board

    task = call(owner, "get_task", task_id=str(second.pk)).structured_content

    assert (task["title"], task["waiting"]["position"]) == ("after it", 2)
    today = timezone.now().date()
    starts, done = (date.fromisoformat(task["forecast"][k]["85"]) for k in ("starts_by", "done_by"))
    assert (starts, done) == (today + timedelta(days=2), today + timedelta(days=4))  # one a day; 2 days each
    assert task["sle"] is None  # waiting, not in an active step


def test_get_task_tells_an_active_task_its_age_against_its_service_level(owner, waiting_board):
    steps, (young, old), waiting = waiting_board

    task = call(owner, "get_task", task_id=str(young.pk)).structured_content

    assert (task["waiting"], task["forecast"]) == (None, None)
    assert task["sle"]["days"] == 2 and task["sle"]["past"] is False  # 85% finished within 2 days


def test_forecast_answers_how_long_for_n_tasks_reproducibly(owner, workflow, waiting_board):
    asked = {"workflow_id": str(workflow.pk), "items": 10, "seed": 7}

    first = call(owner, "forecast", **asked).structured_content
    again = call(owner, "forecast", **asked).structured_content

    assert (first["percentiles"], first["histogram"]) == (again["percentiles"], again["histogram"])
    assert first["history"]["finished"] == 30 and first["trials"] == 10_000
    # one task finished every day of the history: ten more take ten days at every percentile
    assert first["percentiles"] == {"50": 10, "85": 10, "95": 10}
    assert first["dates"]["85"] == (timezone.now().date() + timedelta(days=10)).isoformat()


def test_forecast_answers_how_many_by_a_date(owner, workflow, waiting_board):
    until = timezone.now().date() + timedelta(days=5)

    answer = call(owner, "forecast", workflow_id=str(workflow.pk), until=until.isoformat(), seed=1).structured_content

    assert answer["percentiles"] == {"50": 5, "85": 5, "95": 5}


def test_forecast_needs_one_question_and_a_member(owner, workflow, waiting_board):
    both = call(owner, "forecast", workflow_id=str(workflow.pk), items=3, until="2099-01-01")
    stranger = call(UserFactory(username="sam"), "forecast", workflow_id=str(workflow.pk), items=3)
    hidden_task = call(UserFactory(username="kim"), "get_task", task_id=str(waiting_board[2][0].pk))

    assert both.is_error and set(both.structured_content["errors"]) == {"items", "until"}
    assert stranger.is_error and stranger.structured_content["code"] == "not_found"
    assert hidden_task.is_error and hidden_task.structured_content["code"] == "not_found"
