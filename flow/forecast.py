""" "When will it be done": Monte Carlo over the board's daily throughput.

The history is the tasks that first entered a `done` step on each whole day (24 hours from
`from`) of the window; a trial draws one of those days, with replacement, for each day to
come. Day 0 is today (UTC): a forecast counts the whole days after it.

- `items=N`: the days until N more tasks are done, per trial. "85" is the number of days
  within which 85% of the trials finished.
- `until=<date>`: the tasks done in the days up to and including that date, per trial.
  "85" is the number that 85% of the trials reached or passed.

So each percentile reads as a confidence. The work is bounded by the parameters alone:
at most MAX_TRIALS trials of at most MAX_DAYS days.
"""

import math
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from flow import queries
from flow.figures import EPOCH, INTERVALS, Window, us
from flow.kinds import DONE

CONFIDENCES = (50, 85, 95)
MIN_TRIALS, MAX_TRIALS = 10_000, 20_000
MAX_ITEMS = 10_000
MAX_DAYS = 1_830  # five years: what lies beyond is "more than that", not simulated
DRAWS_AT_ONCE = 2_000_000  # days drawn in one chunk across the trials still running


@dataclass(frozen=True)
class History:
    window: Window
    per_day: list[int]  # tasks finished on each whole day of the window

    @property
    def finished(self) -> int:
        return sum(self.per_day)


def history(workflow, window: Window, board) -> History:
    """The whole days of the window (a trailing part of a day is left out) and the tasks
    that first entered a done step on each."""
    day = INTERVALS["day"]
    days = (window.end - window.start) // day
    whole = Window(window.start, window.start + days * day)
    per_day = [0] * days
    if board.ids(DONE) and days:
        rows = queries.throughput(
            workflow.pk,
            done=board.ids(DONE),
            to=whole.end,
            from_us=us(whole.start),
            to_us=us(whole.end) - 1,  # a finish at the end instant belongs to the next day
            step_us=us(EPOCH + day),
        )
        for bucket, count in rows:
            per_day[int(bucket)] += count
    return History(whole, per_day)


def days_until_done(per_day: list[int], items: int, trials: int, rng) -> np.ndarray:
    """Per trial, the days until `items` tasks are done; MAX_DAYS + 1 for "not within
    MAX_DAYS". The days that could not be enough even if each were the best day of the
    history are drawn at once (only their sum matters: `_sums`); then the days one by one,
    a chunk at a time, for the trials still running."""
    samples = np.asarray(per_day, dtype=np.int64)
    values, p = _distinct(per_day)
    best = int(values[-1])
    result = np.full(trials, MAX_DAYS + 1, dtype=np.int64)
    if best * MAX_DAYS < items:
        return result  # even the best day every day would not do it
    day = (items - 1) // best
    done = _sums(values, p, np.full(trials, day), rng)
    running = np.arange(trials)
    while running.size and day < MAX_DAYS:
        span = min(MAX_DAYS - day, max(1, DRAWS_AT_ONCE // running.size))
        drawn = samples[rng.integers(0, samples.size, size=(running.size, span))]
        totals = done[running, None] + np.cumsum(drawn, axis=1)
        reached = totals >= items
        finished = reached.any(axis=1)
        result[running[finished]] = day + reached[finished].argmax(axis=1) + 1
        done[running] = totals[:, -1]
        running = running[~finished]
        day += span
    return result


def _distinct(per_day: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The distinct daily counts, ascending, and how often each came up (a probability)."""
    values, counts = np.unique(np.asarray(per_day, dtype=np.int64), return_counts=True)
    return values, counts / counts.sum()


def _sums(values: np.ndarray, p: np.ndarray, days, rng) -> np.ndarray:
    """Per trial, the tasks done in `days` days drawn with replacement: drawing them is
    drawing how many times each distinct daily count comes up (a multinomial), so the work
    does not grow with the days."""
    return rng.multinomial(days, p) @ values


def done_within(per_day: list[int], days: int, trials: int, rng) -> np.ndarray:
    """Per trial, the tasks done in `days` days."""
    values, p = _distinct(per_day)
    return _sums(values, p, np.full(trials, days), rng)


def at_confidence(outcomes: np.ndarray, p: int, *, more_is_better: bool) -> int:
    """The outcome that p% of the trials reach: at least that many tasks (`until`), or
    within that many days (`items`)."""
    ordered = np.sort(outcomes)
    n = len(ordered)
    needed = math.ceil(p * n / 100)
    return int(ordered[n - needed] if more_is_better else ordered[needed - 1])


def forecast(workflow, params: dict, board, today: date) -> dict:
    hist = history(workflow, params["window"], board)
    trials, seed = params["trials"], params["seed"]
    rng = np.random.default_rng(seed)
    answer = {
        "items": params.get("items"),
        "until": params.get("until"),
        "start": today,
        "trials": trials,
        "seed": seed,
        "history": {
            "from": hist.window.start,
            "to": hist.window.end,
            "days": len(hist.per_day),
            "finished": hist.finished,
            "throughput_per_day": hist.finished / len(hist.per_day),
        },
        "beyond": 0,
        "dates": None,
    }
    if params.get("items") is not None:
        days = days_until_done(hist.per_day, params["items"], trials, rng)
        within = days[days <= MAX_DAYS]
        percentiles = {}
        for p in CONFIDENCES:
            value = at_confidence(days, p, more_is_better=False)
            percentiles[str(p)] = value if value <= MAX_DAYS else None
        answer["beyond"] = int(trials - within.size)
        answer["dates"] = {p: None if d is None else today + timedelta(days=d) for p, d in percentiles.items()}
        outcomes = within
    else:
        outcomes = done_within(hist.per_day, (params["until"] - today).days, trials, rng)
        percentiles = {str(p): at_confidence(outcomes, p, more_is_better=True) for p in CONFIDENCES}
    values, counts = np.unique(outcomes, return_counts=True)
    answer["percentiles"] = percentiles
    answer["histogram"] = [{"value": int(v), "trials": int(c)} for v, c in zip(values, counts, strict=True)]
    return answer
