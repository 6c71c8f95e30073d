"""Credentials that act for the person who made them: an intake's secret and a review watch's
token act for a writer; an outbound webhook (notifications) for an owner.

A credential carries its creator's authority, so it stops when that ends: the role change
that takes the authority away (teams.services: a removal, a demotion) or the deactivation of
their account disables it in its own transaction (`authority_ends`, `account_ends`). A
credential is also checked where it is used (`lapsed`), for roles changed behind those
services (the admin's membership inline); what that finds is recorded too, so the lists say
why. Only an owner's take-over makes one work again (`taken_over`). A credential without a
creator was made by an operator (the admin) and answers to nobody's role.

Each kind is registered once (`register`) with the path to its workspace and the authority
it needs; apps above this one register theirs in `ready()`.
"""

import operator
from dataclasses import dataclass

from django.db.models import Q
from django.utils import timezone

from common.errors import Forbidden
from integrations.models import ActsForCreator, DisabledReason, Intake, ReviewWatch
from workflows.access import WRITE_ROLES, require_role, role_in, still_holds
from workflows.models import Role


@dataclass(frozen=True)
class Kind:
    model: type[ActsForCreator]
    workspace: str  # the path from the credential to its workspace's id
    owner: bool  # it needs its creator to be an owner (else a writer: owner or member)

    def granted_by(self, role: str | None) -> bool:
        return role == Role.OWNER if self.owner else role in WRITE_ROLES

    def workspace_of(self, credential) -> str:
        return operator.attrgetter(self.workspace.replace("__", "."))(credential)


KINDS: list[Kind] = [
    Kind(Intake, "workflow__workspace_id", owner=False),
    Kind(ReviewWatch, "workflow__workspace_id", owner=False),
]


def register(model: type[ActsForCreator], *, workspace: str, owner: bool) -> None:
    KINDS.append(Kind(model, workspace, owner))


def _kind(credential) -> Kind:
    return next(k for k in KINDS if isinstance(credential, k.model))


def _disable(kinds, *, user_id, reason: DisabledReason, workspace_id=None) -> None:
    now = timezone.now()
    for kind in kinds:
        scope = Q(created_by_id=user_id, disabled_at__isnull=True)
        if workspace_id is not None:
            scope &= Q(**{kind.workspace: workspace_id})
        kind.model.objects.filter(scope).update(disabled_at=now, disabled_reason=reason)


def _reason(kind: Kind, *, active: bool, role: str | None) -> DisabledReason:
    if not active:
        return DisabledReason.CREATOR_DEACTIVATED
    if role is None:
        return DisabledReason.CREATOR_REMOVED
    return DisabledReason.CREATOR_NOT_OWNER if kind.owner else DisabledReason.CREATOR_VIEWER


def authority_ends(*, user_id, workspace_id, role_before: str, role_after: str | None) -> None:
    """`user_id`'s role in the workspace changes (`role_after` None: they leave or are
    removed): stop what they made there that the new role no longer allows. Called inside the
    role change's transaction."""
    for kind in KINDS:
        if kind.granted_by(role_before) and not kind.granted_by(role_after):
            reason = _reason(kind, active=True, role=role_after)
            _disable([kind], user_id=user_id, reason=reason, workspace_id=workspace_id)


def account_ends(*, user_id) -> None:
    """`user_id`'s account is deactivated or deleted: everything they made stops."""
    _disable(KINDS, user_id=user_id, reason=DisabledReason.CREATOR_DEACTIVATED)


def lapsed(credential: ActsForCreator) -> str | None:
    """Why `credential` may not act now (a DisabledReason), or None. A lapse found here (a role
    changed behind the services) is recorded. Needs its workspace path and `created_by` loaded."""
    if credential.disabled_at is not None:
        return credential.disabled_reason
    kind = _kind(credential)
    creator, workspace_id = credential.created_by, kind.workspace_of(credential)
    if creator is None or still_holds(creator, workspace_id, write=True, owner=kind.owner):
        return None
    reason = _reason(kind, active=creator.is_active, role=role_in(creator, workspace_id))
    now = timezone.now()
    type(credential).objects.filter(pk=credential.pk, disabled_at__isnull=True).update(
        disabled_at=now, disabled_reason=reason
    )
    credential.disabled_at, credential.disabled_reason = now, reason
    return reason


def require_keeper(actor, credential: ActsForCreator, *, to: str) -> None:
    """A credential's secret, and where it is sent, are its creator's or an owner's to change."""
    role = require_role(actor, _kind(credential).workspace_of(credential), write=True)
    if role != Role.OWNER and actor.pk != credential.created_by_id:
        raise Forbidden(f"Only its creator or a workspace owner may {to}.")


def taken_over(credential: ActsForCreator, *, actor) -> list[str]:
    """Make `actor` (an owner, checked by the caller) its creator and let it work again; the
    changed fields, for the caller's save (which also sets the new secret)."""
    credential.created_by, credential.disabled_at, credential.disabled_reason = actor, None, ""
    return ["created_by", "disabled_at", "disabled_reason"]
