"""Limit experiments: after each recorded limit change of the last N days, did the flow
change? Cycle time (50th/85th/95th percentiles) and throughput of the tasks that first
finished in equal spans before and after the change, with their sample sizes.

A change moment is one instant of the configuration history (one configuration change
can set several limits at once); a limit is a WIP limit of a step, group, person, lane or
cell, or the board's expedite allowance, changed from one value to another (a subject's
creation or deletion is no experiment). Each span is the time since the change, at most N
days: the span after reaches now, the one before as far back before the change. Work is
bounded: at most MAX_MOMENTS moments (else a 400 saying to choose fewer days), and three
queries whatever the history holds.
"""

from datetime import timedelta

from django.db.models import F

from common.errors import Invalid
from flow import config, queries
from flow.figures import PERCENTILES, percentile
from flow.instants import Window, instant, us
from flow.kinds import BACKLOG, DONE, BoardSteps

MAX_MOMENTS = 20
LIMIT_FIELDS = ("wip_limit", "expedite_limit")
DAY_SECONDS = 86400


def experiments(workflow, days: int, now, board: BoardSteps) -> dict:
    changes = (
        config.changes(workflow, Window(now - timedelta(days=days), now))
        .filter(field__in=LIMIT_FIELDS, before__isnull=False, after__isnull=False)
        .exclude(before=F("after"))  # a starting row of the history changed nothing
    )
    moments = list(changes.order_by("at").values_list("at", flat=True).distinct()[: MAX_MOMENTS + 1])
    if len(moments) > MAX_MOMENTS:
        raise Invalid(
            {
                "days": [
                    f"The last {days} days hold more than {MAX_MOMENTS} limit changes (moments of the configuration"
                    f" history); the most is {MAX_MOMENTS}: choose fewer days."
                ]
            }
        )
    if not moments:
        return {"days": days, "experiments": []}
    by_moment: dict = {}
    for change in changes:
        by_moment.setdefault(change.at, []).append(change)
    spans = {at: min(timedelta(days=days), now - at) for at in moments}
    finished = _finished(workflow, board, since=min(at - span for at, span in spans.items()), to=now)
    result = []
    for at in moments:
        span = spans[at]
        result.append(
            {
                "at": at,
                "actor": next((c.actor.get_username() for c in by_moment[at] if c.actor), None),
                "changes": [
                    {
                        "scope": c.scope,
                        "subject_id": c.subject_id,
                        "name": c.name,
                        "field": c.field,
                        "before": c.before,
                        "after": c.after,
                    }
                    for c in by_moment[at]
                ],
                "span_days": span.total_seconds() / DAY_SECONDS,
                "before": _side(finished, us(at - span), us(at), span, closed=False),
                "after": _side(finished, us(at), us(at + span), span, closed=True),
            }
        )
    return {"days": days, "experiments": result}


def _finished(workflow, board: BoardSteps, *, since, to) -> list[tuple]:
    """(finished us, cycle seconds or None) of each task first finished in [since, to]."""
    done = board.ids(DONE)
    if not done:
        return []
    rows = queries.finished_tasks(workflow.pk, done=done, not_active=board.ids(BACKLOG) + done, frm=since, to=to)
    return [
        (finished, None if started is None or started > finished else (finished - started) / 1e6)
        for _task_id, _title, _created, started, finished in rows
    ]


def _side(finished: list, start: int, end: int, span: timedelta, *, closed: bool) -> dict:
    """The tasks first finished from `start` to `end` (`end` itself only when `closed`)."""
    inside = [cycle for at, cycle in finished if start <= at < end or (closed and at == end)]
    cycles = sorted(c for c in inside if c is not None)
    span_days = span.total_seconds() / DAY_SECONDS
    return {
        "from": instant(start),
        "to": instant(end),
        "finished": len(inside),
        "throughput_per_day": len(inside) / span_days if span_days else None,
        "cycle_sample": len(cycles),
        "cycle_percentiles": {str(p): percentile(cycles, p) for p in PERCENTILES},
    }
