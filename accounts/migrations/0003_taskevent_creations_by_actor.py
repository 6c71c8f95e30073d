"""An index for the open-task quota's count (accounts/quotas.py): the creation events of one
account, without reading its moves or anyone else's history.

On TaskEvent, written as SQL (the same on PostgreSQL and SQLite) and kept with the quota
that reads it, so the boards app, being restructured elsewhere, needs no change; it can move
to TaskEvent.Meta.indexes later.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_apitoken_workspace"),
        ("boards", "0006_position_keys"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX taskevent_creations_by_actor ON boards_taskevent (actor_id, kind, task_id)",
            "DROP INDEX taskevent_creations_by_actor",
        )
    ]
