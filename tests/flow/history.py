"""The instants of tests/flow/conftest.py's `history`: hours after T0."""

from datetime import UTC, datetime, timedelta

from flow.figures import Window

T0 = datetime(2024, 3, 1, tzinfo=UTC)
H = timedelta(hours=1)
WINDOW = Window(T0 - H, T0 + 12 * H)


def hours(n: float) -> datetime:
    return T0 + n * H
