"""Timestamps read back exactly as written, in UTC (on PostgreSQL: common.db's loader)."""

from datetime import UTC, datetime, timedelta, timezone

from boards.models import Task


def test_timestamps_round_trip_in_utc(board, make_task):
    backlog, _, _ = board
    task = make_task(backlog, "a")
    written = datetime(2026, 3, 29, 1, 30, 15, 123456, tzinfo=timezone(timedelta(hours=2)))
    Task.objects.filter(pk=task.pk).update(entered_step_at=written)
    read = Task.objects.values_list("entered_step_at", flat=True).get(pk=task.pk)
    assert read == written
    assert read.tzinfo is UTC
    assert read.isoformat() == "2026-03-28T23:30:15.123456+00:00"
