"""Why a card waits, by the shared table of cases (waiting_cases.json): the server's rule
gives every card of each case's board the waiting the table says. The page's rule is held to
the same table in the browser (tests/live/test_journeys_board.py,
`the_page_says_why_each_card_waits_as_the_table_does`)."""

import json
from pathlib import Path

import pytest

from boards.snapshots import board_order, set_waiting
from boards.waiting import Column

TABLE = json.loads((Path(__file__).parent / "waiting_cases.json").read_text())


def case_board(case: dict) -> dict:
    """The case's board as a snapshot holds it: its steps in board order, each with its
    cards in board order."""
    defaults = TABLE["defaults"]
    tasks = [{**defaults["task"], **task} for task in case["tasks"]]
    steps = [{**defaults["step"], **step} for step in case["steps"]]
    for step in steps:
        step["tasks"] = Column(sorted((t for t in tasks if t["step_id"] == step["id"]), key=board_order))
    return {"steps": steps}


@pytest.mark.parametrize("case", TABLE["cases"], ids=[case["case"] for case in TABLE["cases"]])
def test_the_server_says_why_each_card_waits_as_the_table_does(case):
    board = case_board(case)
    set_waiting(board)
    shown = {task["id"]: task["waiting"] for step in board["steps"] for task in step["tasks"]}
    expected = {
        task_id: None if waiting is None else {"state": waiting["state"], "position": waiting["position"]}
        for task_id, waiting in case["waiting"].items()
    }
    assert shown == expected
