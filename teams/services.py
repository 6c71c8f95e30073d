"""Who belongs to a workspace: members and invite links.

Authority ends with the role: the change that ends a person's ownership revokes their open
invite links, and stops the credentials they made that the new role no longer allows
(integrations.credentials: webhooks need an owner, intakes and review watches a writer),
in the same transaction (`_authority_ends`).
Accepting a link re-checks its creator too, for roles changed behind these services (the
admin, a deactivation).

Membership changes lock the workspace's owner rows and the changed row, in ascending id
(the same order personal limits lock memberships in), so two owners demoting or removing
each other at once can never leave a workspace without an owner.
"""

import datetime
import secrets
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from boards.changes import fill_for_persons
from boards.services import unassign_everywhere
from common.errors import Conflict, QuotaExceeded
from integrations import credentials
from teams.models import Invite, InviteState, hash_invite
from workflows import config_history
from workflows.access import WRITE_ROLES, still_holds
from workflows.models import Membership, Role, Workspace

INVITE_DAYS_DEFAULT = 7
INVITE_DAYS_MAX = 90


def _lock_membership(workspace: Workspace, user_id, *, losing_owner: str) -> Membership:
    """Lock the owner rows and `user_id`'s row of `workspace` and return the latter (or raise
    Membership.DoesNotExist). If it is the last owner, refuse: it would be `losing_owner`."""
    rows = list(
        Membership.objects.filter(Q(role=Role.OWNER) | Q(user_id=user_id), workspace=workspace)
        .select_related("user")
        .order_by("pk")
        .select_for_update(of=("self",))
    )
    target = next((m for m in rows if m.user_id == user_id), None)
    if target is None:
        raise Membership.DoesNotExist
    if target.role == Role.OWNER and sum(m.role == Role.OWNER for m in rows) == 1:
        raise Conflict(
            f"{target.user.get_username()} is the last owner and cannot be {losing_owner}.", code="last_owner"
        )
    return target


@transaction.atomic
def member_update(
    *, workspace: Workspace, user_id, role: str | None = None, wip_limit: int | None = None, actor=None
) -> Membership:
    """A new role or personal limit. A raised limit lets the boards where the person's work
    waits fill; someone made a viewer gives up their tasks. Both after commit, board by board."""
    if role is None or role == Role.OWNER:  # promoting never loses an owner
        membership = (
            Membership.objects.select_related("user")
            .select_for_update(of=("self",))
            .get(workspace=workspace, user_id=user_id)
        )
    else:
        membership = _lock_membership(workspace, user_id, losing_owner="demoted")
    before, changed = config_history.person_config(membership), {}
    if role is not None and role != membership.role:
        if role not in WRITE_ROLES and membership.role in WRITE_ROLES:
            transaction.on_commit(_unassign(workspace, user_id, actor), robust=True)
        _authority_ends(workspace, membership.role, role, user_id)
        changed["role"] = role
    if wip_limit is not None and wip_limit != membership.wip_limit:
        if membership.wip_limit and (wip_limit == 0 or wip_limit > membership.wip_limit):
            transaction.on_commit(partial(fill_for_persons, workspace.pk, [user_id]), robust=True)
        changed["wip_limit"] = wip_limit
    for name, value in changed.items():
        setattr(membership, name, value)
    if changed:
        membership.save(update_fields=list(changed))
        config_history.record(
            workspace_id=workspace.pk,
            workflow_id=None,
            actor=actor,
            before=before,
            after=config_history.person_config(membership),
        )
    return membership


@transaction.atomic
def member_remove(*, workspace: Workspace, user_id, actor=None) -> None:
    """Remove a member; their tasks are unassigned on every board after commit."""
    membership = _lock_membership(workspace, user_id, losing_owner="removed")
    _authority_ends(workspace, membership.role, None, user_id)
    membership.delete()
    transaction.on_commit(_unassign(workspace, user_id, actor), robust=True)


def _authority_ends(workspace: Workspace, role_before: str, role_after: str | None, user_id) -> None:
    """What `user_id` handed on stops with the role that allowed it (`role_after` None: they
    leave or are removed). Called inside the role change's transaction."""
    if role_before == Role.OWNER and role_after != Role.OWNER:
        _revoke_open_invites(Invite.objects.filter(workspace=workspace, created_by_id=user_id))
    credentials.authority_ends(
        user_id=user_id, workspace_id=workspace.pk, role_before=role_before, role_after=role_after
    )


def account_authority_ends(*, user_id) -> None:
    """`user_id`'s account is deactivated or deleted: everything they handed on stops."""
    _revoke_open_invites(Invite.objects.filter(created_by_id=user_id))
    credentials.account_ends(user_id=user_id)


def _revoke_open_invites(invites) -> None:
    now = timezone.now()
    invites.open(now).update(revoked_at=now)


def _unassign(workspace: Workspace, user_id, actor):
    return partial(unassign_everywhere, workspace_id=workspace.pk, user_id=user_id, actor=actor)


@transaction.atomic
def invite_create(
    *, workspace: Workspace, role: str, actor, expires_in_days: int = INVITE_DAYS_DEFAULT
) -> tuple[Invite, str]:
    """A new invite and its token (shown once: only its hash is kept)."""
    _check_invite_quota(workspace=workspace)
    token = secrets.token_urlsafe(32)
    invite = Invite.objects.create(
        workspace=workspace,
        role=role,
        token_hash=hash_invite(token),
        created_by=actor,
        expires_at=timezone.now() + datetime.timedelta(days=expires_in_days),
    )
    return invite, token


def invite_revoke(*, invite: Invite) -> None:
    Invite.objects.filter(pk=invite.pk, revoked_at__isnull=True, used_at__isnull=True).update(revoked_at=timezone.now())


def invite_for_token(token: str) -> Invite | None:
    return Invite.objects.select_related("workspace", "created_by").filter(token_hash=hash_invite(token)).first()


class InviteUnusable(Conflict):
    MESSAGES = {
        InviteState.USED: "This invite link has already been used.",
        InviteState.REVOKED: "This invite link has been revoked.",
        InviteState.EXPIRED: "This invite link has expired.",
    }

    def __init__(self, state: InviteState, *, detail: str = "", code: str = ""):
        super().__init__(detail or self.MESSAGES[state], code=code or f"invite_{state}")
        self.state = state


class InviteCreatorLostAuthority(InviteUnusable):
    """The link is open, but the person who made it is no longer an active owner: it is
    refused as a revoked one is, with its own code."""

    def __init__(self):
        super().__init__(
            InviteState.REVOKED,
            detail="This invite link no longer works: the person who made it may no longer grant this role.",
            code="invite_creator_lost_authority",
        )


def invite_refusal(invite: Invite, now) -> InviteUnusable | None:
    """Why the link joins nobody, or None. Granting a role is an owner's (as making the link is)."""
    state = invite.state(now)
    if state is not InviteState.OPEN:
        return InviteUnusable(state)
    if not still_holds(invite.created_by, invite.workspace_id, owner=True):
        return InviteCreatorLostAuthority()
    return None


@transaction.atomic
def invite_accept(*, token: str, user) -> Membership:
    """Join the invite's workspace as `user`; the link is used up. Someone who is already a
    member keeps their role (an invite never demotes) and leaves the link unused."""
    invite = (
        Invite.objects.select_for_update(of=("self",))
        .select_related("created_by")
        .filter(token_hash=hash_invite(token))
        .first()
    )
    if invite is None:
        raise Invite.DoesNotExist
    refusal = invite_refusal(invite, timezone.now())
    if refusal is not None:
        raise refusal
    existing = Membership.objects.filter(workspace_id=invite.workspace_id, user=user).first()
    if existing is not None:
        return existing
    membership = Membership.objects.create(workspace_id=invite.workspace_id, user=user, role=invite.role)
    invite.used_by, invite.used_at = user, timezone.now()
    invite.save(update_fields=["used_by", "used_at"])
    return membership


def _check_invite_quota(*, workspace: Workspace) -> None:
    """A workspace may have KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE open invite links (0: any
    number). Counted with the workspace's row locked, inside the invite create's transaction."""
    limit = settings.KANDEV_MAX_OPEN_INVITES_PER_WORKSPACE
    if not limit:
        return
    Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    if Invite.objects.filter(workspace=workspace).open(timezone.now()).count() >= limit:
        raise QuotaExceeded(
            quota="open_invites",
            limit=limit,
            detail=f"This workspace has {limit} open invite links, the most it may have at once. "
            "Revoke one that is no longer needed.",
        )
