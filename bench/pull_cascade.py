"""4. Pull cascade: vacate k slots of a limited step whose feeder chain is deep.

Intake (deep, unlimited) -> Ready (limit 100, pulls from Intake) -> Doing (limit 100, pulls
from Ready) -> Done. Bulk-moving k tasks from Doing to Done makes Doing pull k from Ready,
which pulls k from Intake: 3k task writes in one transaction. Measured in-process.
"""

import time

from django.db import connection
from django.test.utils import CaptureQueriesContext

from bench.common import spread
from bench.fixtures import bulk_tasks, workflow_with_steps
from boards.admission import task_bulk_move
from boards.changes import reconcile_board
from boards.models import Task

LIMIT = 100


def run(*, workspace, user, ks, reps: int) -> dict:
    workflow, (intake, ready, doing, done) = workflow_with_steps(
        workspace,
        "Pull cascade",
        [
            {"name": "Intake", "is_start_step": True},
            {"name": "Ready", "wip_limit": LIMIT, "pull_from": 0},
            {"name": "Doing", "wip_limit": LIMIT, "pull_from": 1},
            {"name": "Done"},
        ],
    )
    bulk_tasks(intake, 2 * LIMIT + reps * sum(ks) + 1000, label="Intake")
    reconcile_board(workflow_id=workflow.pk)
    rows = []
    for k in ks:
        times, queries = [], []
        for _ in range(reps):
            ids = list(Task.objects.occupying().filter(step=doing).in_board_order().values_list("id", flat=True)[:k])
            start = time.perf_counter()
            with CaptureQueriesContext(connection) as captured:
                task_bulk_move(task_ids=ids, to_step=done, actor=user)
            times.append((time.perf_counter() - start) * 1000)
            queries.append(len(captured))
            assert Task.objects.occupying().filter(step=doing).count() == LIMIT, "the cascade did not refill"
        rows.append({"k": k, "tasks_written": 3 * k, "ms": spread(times), "queries": spread(queries)})
    return {"repetitions": reps, "rows": rows}
