"""`?per_step=N`: each column shows its first N tasks, with exact totals and counts."""

from django.db import connection
from django.test.utils import CaptureQueriesContext


def test_per_step_shows_the_first_tasks_of_each_column_with_exact_counts(api, board, make_task):
    backlog, doing, done = board
    make_task(doing, "d0")
    make_task(doing, "d1")  # In Progress is full: Backlog keeps its tasks
    for i in range(5):
        make_task(backlog, f"b{i}")
    make_task(done, "x", is_ephemeral=True)
    url = f"/api/v1/workflows/{backlog.workflow_id}/board/"
    whole = api.get(url).json()
    with CaptureQueriesContext(connection) as queries:
        page = api.get(url, {"per_step": 2}).json()
    assert len(queries) == 7  # the board read (6, its lanes included) and the columns' exact counts
    for full, short in zip(whole["steps"], page["steps"], strict=True):
        assert short["tasks"] == full["tasks"][:2]
        assert short["tasks_total"] == len(full["tasks"])
        assert (short["occupied"], short["queued"]) == (full["occupied"], full["queued"])
    assert [s["tasks_total"] for s in page["steps"]] == [5, 2, 1]
    assert "tasks_total" not in whole["steps"][0]


def test_per_step_must_be_a_sensible_number(api, board):
    url = f"/api/v1/workflows/{board[0].workflow_id}/board/"
    for bad in ("0", "-1", "x", "1001"):
        response = api.get(url, {"per_step": bad})
        assert response.status_code == 400
        assert response.json()["errors"]["per_step"]
