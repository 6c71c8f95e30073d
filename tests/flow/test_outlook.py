"""A task detail's `forecast` (a waiting task: when it will likely start and be done) and
`sle` (a task in an active step: its age against its service level), from the board's
history of the last 30 days."""

from datetime import date, timedelta

import pytest
from django.utils import timezone

from boards.models import Task
from flow.outlook import task_outlook
from tests.factories import board
from tests.flow.factories import finished_history

DAY = timedelta(days=1)


@pytest.fixture
def waiting_board(workflow, make_task):
    """In Progress (limit 2, pulls from Backlog) is full; two tasks wait in Backlog."""
    steps = board(workflow)
    backlog, doing, done = steps
    busy = [make_task(doing, "busy 1"), make_task(doing, "busy 2")]
    waiting = [make_task(backlog, "next"), make_task(backlog, "after it")]
    return steps, busy, waiting


def test_a_waiting_task_has_its_forecast_in_the_detail(api, workflow, waiting_board):
    steps, busy, (first, second) = waiting_board
    finished_history(workflow, steps, 30, timezone.now())  # one a day, every day of the 30
    detail = api.get(f"/api/v1/tasks/{second.pk}/").json()
    assert detail["waiting"]["position"] == 2
    forecast = detail["forecast"]
    days = {k: {p: date.fromisoformat(v) for p, v in d.items()} for k, d in forecast.items()}
    assert days["starts_by"]["50"] <= days["starts_by"]["85"]
    assert days["done_by"]["50"] <= days["done_by"]["85"]
    assert days["starts_by"]["85"] < days["done_by"]["85"]
    # one task a day finishes: the second in line starts on day 2, and is done 2 days later
    today = timezone.now().date()
    assert (days["starts_by"]["85"], days["done_by"]["85"]) == (today + 2 * DAY, today + 4 * DAY)
    assert detail["sle"] is None  # not in an active step


def test_the_forecast_is_the_same_for_the_same_history(workflow, waiting_board):
    """Seeded by the task: the same question on the same history has the same answer."""
    steps, busy, (first, second) = waiting_board
    now = timezone.now()
    finished_history(workflow, steps, 5, now)
    finished_history(workflow, steps, 3, now - 7 * DAY)  # uneven days: the draws matter
    waiting = {"position": 2}
    answers = [task_outlook(second, waiting, now=now)["forecast"] for _ in range(2)]
    assert answers[0] == answers[1] and answers[0] is not None
    assert task_outlook(first, {"position": 1}, now=now)["forecast"]["starts_by"]["50"] <= answers[0]["starts_by"]["50"]


def test_without_history_there_is_no_forecast(api, workflow, waiting_board):
    steps, busy, (first, second) = waiting_board
    detail = api.get(f"/api/v1/tasks/{first.pk}/").json()
    assert (detail["waiting"]["position"], detail["forecast"], detail["sle"]) == (1, None, None)


def test_an_active_task_shows_its_age_against_its_sle(api, workflow, waiting_board):
    steps, (young, old), waiting = waiting_board
    backlog, doing, done = steps
    now = timezone.now()
    finished_history(workflow, steps, 10, now)  # cycles just under 2 days: the SLE is 2 days
    Task.objects.filter(pk=old.pk).update(started_at=now - 5 * DAY)  # its cycle started 5 days ago
    young_sle = api.get(f"/api/v1/tasks/{young.pk}/").json()["sle"]
    assert (young_sle["days"], young_sle["past"]) == (2, False)
    assert 0 <= young_sle["age_days"] < 0.1
    old_detail = api.get(f"/api/v1/tasks/{old.pk}/").json()
    assert (old_detail["sle"]["days"], old_detail["sle"]["past"], old_detail["forecast"]) == (2, True, None)
    assert 5 <= old_detail["sle"]["age_days"] < 5.1


def test_the_detail_s_queries_do_not_grow_with_the_history(api, workflow, waiting_board, django_assert_max_num_queries):
    steps, busy, (first, second) = waiting_board
    api.get(f"/api/v1/tasks/{second.pk}/")  # warm the session
    counts = []
    for count in (2, 20):
        finished_history(workflow, steps, count, timezone.now())
        with django_assert_max_num_queries(30) as captured:
            assert api.get(f"/api/v1/tasks/{second.pk}/").json()["forecast"] is not None
        counts.append(len(captured))
    assert counts[0] == counts[1]
