"""seed_demo leaves the flow page something to show: a month of finished tasks."""

import io

from django.core.management import call_command

from flow import figures
from flow.serializers import DEFAULT_WINDOW
from workflows.models import Workflow


def test_the_demo_board_has_a_month_of_flow(db):
    call_command("seed_demo", stdout=io.StringIO())
    board = Workflow.objects.get(name="Demo board")
    now = figures.timezone.now()
    window = figures.Window(now - DEFAULT_WINDOW, now)
    cycles = figures.cycle_times(board, window)
    assert len(cycles["items"]) >= 20
    assert all(item["cycle_seconds"] > 0 for item in cycles["items"])
    assert sum(b["count"] for b in figures.throughput(board, window, "day")["buckets"]) == len(cycles["items"])
    limits = {row["name"]: row for row in figures.limits(board, window)["limits"]}
    assert all(not row["breaches"] for row in limits.values())  # two people: never over a limit
