"""The flow figures' index of a board's state events in time order (flow/queries.py).

Written as SQL on TaskEvent, as boards/migrations/0003_flow_indexes.py is, so the boards
models need no change. Covering: the window's state events are read index-only. Partial on
the statements' own condition for a state event (flow.queries.STATE_EVENT, compared in
tests/flow/test_indexes.py): the planner then has no filter left to apply and prefers it to
the `at` index and the heap, also on a database that holds one board.
"""

from django.db import migrations

STATE_EVENT = (
    "kind IN ('created', 'moved', 'pulled', 'promoted', 'restored', 'forced', 'queued', 'archived', 'deleted')"
    " AND NOT (kind = 'moved' AND from_step_id = to_step_id)"
)


class Migration(migrations.Migration):
    dependencies = [("boards", "0004_task_blocked")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX taskevent_flow_state_by_time ON boards_taskevent"
            f" (workflow_id, at, task_id, id, kind, from_step_id, to_step_id) WHERE {STATE_EVENT}",
            "DROP INDEX taskevent_flow_state_by_time",
        )
    ]
