"""seed_demo leaves the flow page something to show: a month of finished tasks."""

import io

from django.core.management import call_command

from flow import analytics, figures
from flow.experiments import experiments
from flow.kinds import BoardSteps
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


def test_the_demo_month_has_typed_blocks_and_a_limit_experiment(db):
    """The blocker clusters and the limit experiments have something to show: typed blocks
    that held In Progress's slots, and In Progress's limit lowered from 4 to 3 half-way."""
    call_command("seed_demo", stdout=io.StringIO())
    board = Workflow.objects.get(name="Demo board")
    now = figures.timezone.now()
    window = figures.Window(now - DEFAULT_WINDOW, now)
    steps = BoardSteps.of(board)

    types = {row["name"]: row for row in analytics.blockers(board, window, steps)["types"]}
    assert {"Waiting on another team", "Test environment down", None} <= set(types)
    assert all(row["count"] >= 1 and row["capacity_days"] > 0 for row in types.values())

    (experiment,) = experiments(board, 30, now, steps)["experiments"]
    assert [(c["name"], c["before"], c["after"]) for c in experiment["changes"]] == [("In Progress", 4, 3)]
    assert experiment["before"]["finished"] > 0 and experiment["after"]["finished"] > 0
