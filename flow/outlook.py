"""One task's outlook, for its detail: `forecast` (a waiting task: when it will likely
start and be done) and `sle` (a task in an active step: its age against its service level).

Both read the history of the last DEFAULT_WINDOW (30 days) only, as the board's forecast does
by default: the work per request is bounded by that window, not by the board's history.

The forecast runs TRIALS futures. In each, the days drawn from the window's daily
throughput until as many tasks are done as stand at and ahead of the task in the pull order
(`waiting.position`: each finish opens a place) is when it starts; a cycle time drawn from
the tasks finished in the window, in whole days, after that is when it is done. The seed is
the task's id: the same history gives the same answer.
"""

import math
from datetime import timedelta

import numpy as np
from django.utils import timezone

from boards.models import Task
from flow import analytics, forecast
from flow.analytics import DAY_SECONDS
from flow.figures import Window, cycle_items
from flow.kinds import ACTIVE, BoardSteps
from flow.serializers import DEFAULT_WINDOW

TRIALS = forecast.MIN_TRIALS
CONFIDENCES = (50, 85)


def task_outlook(task: Task, waiting: dict | None, now=None) -> dict:
    now = now or timezone.now()
    board = BoardSteps.of(task.workflow)
    window = Window(now - DEFAULT_WINDOW, now)
    items = None  # the window's finished tasks, read once for both

    def finished():
        nonlocal items
        if items is None:
            items = cycle_items(task.workflow, window, board)
        return items

    outlook = {"forecast": None, "sle": None}
    if waiting is not None:
        outlook["forecast"] = _forecast(task, waiting["position"], board, window, finished, now)
    if task.admitted and task.archived_at is None and board.kinds.get(task.step_id) == ACTIVE:
        outlook["sle"] = _sle(task, board, window, finished, now)
    return outlook


def _forecast(task, position: int, board, window, finished, now) -> dict | None:
    history = forecast.history(task.workflow, window, board)
    cycles = [i["cycle_seconds"] for i in finished() if i["cycle_seconds"]]
    if not history.finished or not cycles:
        return None  # nothing finished in the window: no throughput or no cycle to draw from
    rng = np.random.default_rng(task.pk.int % 2**63)
    starts = forecast.days_until_done(history.per_day, position, TRIALS, rng)
    cycle_days = np.ceil(np.asarray(cycles) / DAY_SECONDS).astype(np.int64)
    done = starts + cycle_days[rng.integers(0, cycle_days.size, size=TRIALS)]
    today = now.date()

    def dates(days) -> dict:
        result = {}
        for p in CONFIDENCES:
            d = forecast.at_confidence(days, p, more_is_better=False)
            result[str(p)] = today + timedelta(days=d) if d <= forecast.MAX_DAYS else None
        return result

    return {"starts_by": dates(starts), "done_by": dates(done)}


def _sle(task, board, window, finished, now) -> dict | None:
    sles = analytics.sle(task.workflow, window, board, finished())["sles"]
    days = next(s["days"] for s in sles if s["class_of_service"] == task.class_of_service)
    started = task.started_at  # its cycle's start, as its card and the service-level pass have it
    if days is None or started is None:
        return None
    age = (now - started).total_seconds() / DAY_SECONDS
    return {"days": days, "age_days": math.floor(age * 100) / 100, "past": age > days}
