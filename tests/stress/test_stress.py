"""The stress run in CI: 16 clients, 2 workers, 20 s; then every invariant (invariants.py).
And the same with each worker SIGKILLed once mid-run and restarted."""

import json
import random

import pytest

from tests.stress.run import run

pytestmark = pytest.mark.slow


def stress(**kwargs) -> dict:
    random.seed(8)  # the operation mix; the interleaving is the machine's
    report = run(log=print, **kwargs)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return report


def test_stress_keeps_every_invariant():
    report = stress(clients=16, seconds=20, workers=2)
    assert not report["violations"], "\n".join(report["violations"])
    assert report["tasks_created"] > 0 and report["statuses"].get(409, 0) > 0
    assert set(report["operations"]) >= {
        "create_start",
        "create_explicit",
        "move",
        "reorder",
        "bulk_move",
        "archive",
        "restore",
        "limit",
        "feeder",
        "step_create",
        "step_delete",
        "force",
    }


def test_sigkilled_workers_lose_nothing_half_written_and_restart():
    report = stress(clients=8, seconds=12, workers=2, kill_workers=True)
    assert report["workers_killed"] == 2
    assert not report["violations"], "\n".join(report["violations"])
    assert report["version"] > 0
