"""Intakes and review watches made before their creator's authority ended (removed, made a
viewer, deactivated) stop now, as they would have under the rule (integrations.credentials)."""

from django.db import migrations
from django.utils import timezone

WRITE_ROLES = ("owner", "member")


def disable_lapsed(apps, schema_editor):
    Membership = apps.get_model("workflows", "Membership")
    roles = {(m.workspace_id, m.user_id): m.role for m in Membership.objects.all()}
    now = timezone.now()
    for name in ("Intake", "ReviewWatch"):
        model = apps.get_model("integrations", name)
        in_force = model.objects.filter(disabled_at__isnull=True, created_by__isnull=False)
        for credential in in_force.select_related("created_by", "workflow"):
            role = roles.get((credential.workflow.workspace_id, credential.created_by_id))
            if not credential.created_by.is_active:
                reason = "creator_deactivated"
            elif role is None:
                reason = "creator_removed"
            elif role not in WRITE_ROLES:
                reason = "creator_viewer"
            else:
                continue
            model.objects.filter(pk=credential.pk).update(disabled_at=now, disabled_reason=reason)


class Migration(migrations.Migration):
    dependencies = [
        ("integrations", "0002_creator_authority"),
        ("workflows", "0003_limits"),
    ]

    operations = [migrations.RunPython(disable_lapsed, migrations.RunPython.noop)]
