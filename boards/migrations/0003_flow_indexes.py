"""Indexes for the flow figures (flow/queries.py), on TaskEvent only.

Written as SQL (the same on PostgreSQL and SQLite) so the boards models, being refactored
elsewhere, need no change; they can move to TaskEvent.Meta.indexes later.
"""

from django.db import migrations

INDEXES = {
    # Each task's history in order, per board: the transitions' LAG/LEAD window and the
    # events of the tasks that finished. Covering (every column they read) so both are
    # index-only scans in that order, with no sort and no heap access.
    "taskevent_flow_by_task": "(workflow_id, task_id, at, id, kind, from_step_id, to_step_id)",
    # Entries into a step in a time range: finishes (throughput, cycle times); covering
    # too (index-only scans).
    "taskevent_flow_by_target": "(workflow_id, to_step_id, at, task_id, kind, from_step_id)",
    # Events of one kind in a time range: forced admissions, queue and pull counts.
    "taskevent_flow_by_kind": "(workflow_id, kind, at)",
}


class Migration(migrations.Migration):
    dependencies = [("boards", "0002_alter_taskevent_kind")]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX {name} ON boards_taskevent {columns}",
            f"DROP INDEX {name}",
        )
        for name, columns in INDEXES.items()
    ]
