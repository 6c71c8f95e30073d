"""Why a card waits, by the shared table of cases (tests/boards/waiting_cases.json), in the
page's own rule: the board's script says, for every card of each case's board, the waiting
the table says, in the table's words, on the card and in the task detail. The server's rule
is held to the same table (tests/boards/test_waiting_cases.py)."""

import pytest

from tests.boards.test_waiting_cases import TABLE

pytestmark = [pytest.mark.slow, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Each case's board through the page's modules (waiting.js, render.js), as the board loads them.
SHOWN = """async (table) => {
    const base = document.querySelector('script[type="module"][src*="board/board"]').src;
    const { boardWaiting } = await import(new URL("waiting.js", base));
    const { waitingText } = await import(new URL("render.js", base));
    const { detailWaitingText } = await import(new URL("detail.js", base));
    const ranks = JSON.parse(document.getElementById("priority-ranks").textContent);
    return table.cases.map((board) => {
        const steps = board.steps.map((step) => ({ ...table.defaults.step, ...step }));
        const tasks = board.tasks.map((task) => ({ ...table.defaults.task, ...task }));
        const waiting = boardWaiting(steps, tasks, ranks);
        return Object.fromEntries(tasks.map((task) => {
            const why = waiting.get(task.id);
            if (!why) return [task.id, null];
            const detail = detailWaitingText({ ...why, held_by: [], skipped_because: null });
            return [task.id, { state: why.state, position: why.position, label: waitingText(why), detail }];
        }));
    });
}"""


def test_the_page_says_why_each_card_waits_as_the_table_does(open_board, owner, workflow, board):
    page = open_board(owner, workflow)
    shown = page.evaluate(SHOWN, TABLE)
    for case, cards in zip(TABLE["cases"], shown, strict=True):
        detail = {task: why and {**why, "detail": f"Waiting: {why['label']}"} for task, why in case["waiting"].items()}
        assert cards == detail, case["case"]


ORDINALS = {
    1: "1st",
    2: "2nd",
    3: "3rd",
    4: "4th",
    11: "11th",
    12: "12th",
    13: "13th",
    21: "21st",
    22: "22nd",
    111: "111th",
}


def test_a_place_reads_as_an_ordinal(open_board, owner, workflow, board):
    page = open_board(owner, workflow)
    shown = page.evaluate(
        """async (places) => {
            const base = document.querySelector('script[type="module"][src*="board/board"]').src;
            const { ordinal } = await import(new URL("render.js", base));
            return places.map(ordinal);
        }""",
        list(ORDINALS),
    )
    assert shown == list(ORDINALS.values())
