"""The instants of tests/flow/conftest.py's `history` (hours after T0), and the flow figures
every window-only request answers."""

from datetime import UTC, datetime, timedelta

from flow.figures import Window

T0 = datetime(2024, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)
WINDOW = Window(T0 - H, T0 + 12 * H)


def hours(n: float) -> datetime:
    return T0 + n * H


# The figures that take a window alone (the forecast also wants `items` or `until`).
ENDPOINTS = [
    "cfd",
    "wip",
    "cycle-times",
    "throughput",
    "aging",
    "limits",
    "queues",
    "sle",
    "advice",
    "blockers",
    "efficiency",
    "limit-changes",
]
# The figures bounded by the events in their window; the configuration history is bounded by its page.
FIGURES = [name for name in ENDPOINTS if name != "limit-changes"]
