"""Open invite links whose creator is no longer an active owner of the workspace are revoked
now, as they would have been under the rule (teams.services)."""

from django.db import migrations
from django.utils import timezone


def revoke_lapsed(apps, schema_editor):
    Invite = apps.get_model("teams", "Invite")
    Membership = apps.get_model("workflows", "Membership")
    owners = set(Membership.objects.filter(role="owner", user__is_active=True).values_list("workspace_id", "user_id"))
    now = timezone.now()
    open_invites = Invite.objects.filter(revoked_at__isnull=True, used_at__isnull=True, expires_at__gt=now)
    lapsed = [i.pk for i in open_invites if (i.workspace_id, i.created_by_id) not in owners]
    Invite.objects.filter(pk__in=lapsed).update(revoked_at=now)


class Migration(migrations.Migration):
    dependencies = [
        ("teams", "0001_initial"),
        ("workflows", "0003_limits"),
    ]

    operations = [migrations.RunPython(revoke_lapsed, migrations.RunPython.noop)]
