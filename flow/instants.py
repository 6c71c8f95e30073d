"""Instants as the flow figures compute with them: integer microseconds since the epoch
(exact, the same arithmetic on every database), and a window of the history."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def us(instant: datetime) -> int:
    return (instant - EPOCH) // timedelta(microseconds=1)


def instant(value: int | None) -> datetime | None:
    return None if value is None else EPOCH + timedelta(microseconds=int(value))


@dataclass(frozen=True)
class Window:
    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()
