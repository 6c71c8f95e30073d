"""Intakes and review watches act for the person who made them.

An intake's secret and a watch's token carry their creator's authority, so they stop when it
ends: the role change that removes the creator or makes them a viewer (teams.services), or
the deactivation of their account, disables them in its own transaction. A credential is
also checked where it is used (`lapsed`), for roles changed behind those services (the
admin's membership inline); what that finds is recorded too, so the lists say why. Only an
owner's take-over makes one work again. A credential without a creator was made by an
operator (the admin) and answers to nobody's role.
"""

from django.db.models import Q
from django.utils import timezone

from common.errors import Forbidden
from integrations.models import ActsForCreator, DisabledReason, Intake, ReviewWatch
from workflows.access import require_role, role_in, still_holds
from workflows.models import Role

CREDENTIALS = (Intake, ReviewWatch)


def disable_created_by(*, user_id, reason: DisabledReason, workspace_id=None) -> None:
    """Stop every credential `user_id` made (in `workspace_id`, or anywhere)."""
    now = timezone.now()
    scope = Q(created_by_id=user_id, disabled_at__isnull=True)
    if workspace_id is not None:
        scope &= Q(workflow__workspace_id=workspace_id)
    for model in CREDENTIALS:
        model.objects.filter(scope).update(disabled_at=now, disabled_reason=reason)


def lapsed(credential: ActsForCreator) -> str | None:
    """Why `credential` may not act now (a DisabledReason), or None. A lapse found here (a role
    changed behind the services) is recorded. Needs `workflow` and `created_by` loaded."""
    if credential.disabled_at is not None:
        return credential.disabled_reason
    creator, workspace_id = credential.created_by, credential.workflow.workspace_id
    if creator is None or still_holds(creator, workspace_id, write=True):
        return None
    if not creator.is_active:
        reason = DisabledReason.CREATOR_DEACTIVATED
    elif role_in(creator, workspace_id) is None:
        reason = DisabledReason.CREATOR_REMOVED
    else:
        reason = DisabledReason.CREATOR_VIEWER
    now = timezone.now()
    type(credential).objects.filter(pk=credential.pk, disabled_at__isnull=True).update(
        disabled_at=now, disabled_reason=reason
    )
    credential.disabled_at, credential.disabled_reason = now, reason
    return reason


def require_keeper(actor, credential: ActsForCreator, *, to: str) -> None:
    """A credential's secret, and where it is sent, are its creator's or an owner's to change."""
    role = require_role(actor, credential.workflow.workspace_id, write=True)
    if role != Role.OWNER and actor.pk != credential.created_by_id:
        raise Forbidden(f"Only its creator or a workspace owner may {to}.")


def taken_over(credential: ActsForCreator, *, actor) -> list[str]:
    """Make `actor` (an owner, checked by the caller) its creator and let it work again; the
    changed fields, for the caller's save (which also sets the new secret)."""
    credential.created_by, credential.disabled_at, credential.disabled_reason = actor, None, ""
    return ["created_by", "disabled_at", "disabled_reason"]
