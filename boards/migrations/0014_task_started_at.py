from django.db import migrations, models
from django.db.models import Min, OuterRef, Subquery

# The kinds that put a live task into a step, admitted (flow/queries.py's ENTRY_KINDS).
ENTRY_KINDS = ["created", "moved", "pulled", "promoted", "restored", "forced"]


def backfill(apps, schema_editor):
    """Each task's first admission into a step that is active now, from its history: what
    the flow figures have read as its cycle's start so far."""
    Task = apps.get_model("boards", "Task")
    TaskEvent = apps.get_model("boards", "TaskEvent")
    WorkflowStep = apps.get_model("workflows", "WorkflowStep")
    active = WorkflowStep.objects.filter(kind="active").values("pk")
    first = (
        TaskEvent.objects.filter(task_id=OuterRef("pk"), kind__in=ENTRY_KINDS, to_step_id__in=active)
        .values("task_id")
        .annotate(first=Min("at"))
        .values("first")[:1]
    )
    Task.objects.filter(started_at__isnull=True).update(started_at=Subquery(first))


class Migration(migrations.Migration):
    dependencies = [
        ("boards", "0013_blocker_types"),
        ("workflows", "0002_step_kind"),
    ]

    operations = [
        migrations.AddField(
            model_name="task",
            name="started_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
