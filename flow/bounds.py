"""How much work one flow request may ask for: decided here, once, for
every `/flow/` endpoint, before any figure is computed.

Two bounds, each a setting: the points a chart would hold (instants x steps for the CFD and WIP,
buckets for throughput; KANDEV_FLOW_MAX_POINTS), which bound the Python work and the
answer's size; and the history events in the window (KANDEV_FLOW_MAX_EVENTS), which bound
the database's. Above either, a 400 with field errors saying what to narrow.
"""

import math

from django.conf import settings

from common.errors import Invalid
from flow import queries
from flow.figures import INTERVALS, Window

# A coarser interval to suggest, per figure and interval.
COARSER = {"cfd": {"hour": "day"}, "wip": {"hour": "day"}, "throughput": {"day": "week"}}
UNITS = {"hour": "hours", "day": "days", "week": "weeks"}


def chart_points(figure: str, window: Window, interval: str, steps: int) -> tuple[int, str]:
    """(points, how they add up) of a figure drawn per interval; (0, "") for the others."""
    if figure not in COARSER:
        return 0, ""
    spans = math.ceil((window.end - window.start) / INTERVALS[interval])
    if figure in ("cfd", "wip"):  # an instant per interval from `from`, and `to` itself
        return (spans + 1) * max(steps, 1), f"{spans + 1:,} instants × {steps:,} steps"
    return max(spans, 1), f"{max(spans, 1):,} {UNITS[interval]}"


def check(*, figure: str, workflow_id, window: Window, interval: str | None, steps: int) -> None:
    """Refuse (Invalid) a request whose work would exceed a bound."""
    most = settings.KANDEV_FLOW_MAX_POINTS
    points, parts = chart_points(figure, window, interval, steps)
    if points > most:
        coarser = COARSER[figure].get(interval)
        narrow = f"a shorter window or interval={coarser}" if coarser else "a shorter window"
        message = f"This chart would have {points:,} points ({parts}); the most is {most:,}: choose {narrow}."
        raise Invalid({"from": [message], "to": [message], **({"interval": [message]} if coarser else {})})
    most = settings.KANDEV_FLOW_MAX_EVENTS
    if queries.state_events_up_to(workflow_id, frm=window.start, to=window.end, most=most) > most:
        message = (
            f"This window holds more than {most:,} events of the board's history; "
            f"the most is {most:,}: choose a shorter window."
        )
        raise Invalid({"from": [message], "to": [message]})
