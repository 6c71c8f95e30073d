"""Who belongs to a workspace: members and invite links (product.md §7b).

Membership changes lock the workspace's owner rows and the changed row, in ascending id
(the same order personal limits lock memberships in), so two owners demoting or removing
each other at once can never leave a workspace without an owner.
"""

import datetime
import secrets
from functools import partial

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts import quotas
from boards.access import WRITE_ROLES
from boards.changes import fill_for_persons
from boards.services import unassign_everywhere
from kandev.errors import Conflict, Invalid
from teams.models import Invite, InviteState, hash_invite
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


def find_user(*, username: str = "", email: str = ""):
    """An active user by username or e-mail (exact, e-mail case-insensitive), or a 400."""
    users = get_user_model().objects.filter(is_active=True)
    if username:
        user, field = users.filter(username=username).first(), "username"
    else:
        matches = list(users.filter(email__iexact=email)[:2]) if email else []
        user, field = (matches[0] if len(matches) == 1 else None), "email"
    if user is None:
        raise Invalid({field: ["No such user."]})
    return user


@transaction.atomic
def member_add(*, workspace: Workspace, user, role: str, wip_limit: int = 0) -> Membership:
    try:
        with transaction.atomic():
            return Membership.objects.create(workspace=workspace, user=user, role=role, wip_limit=wip_limit)
    except IntegrityError:
        raise Conflict(f"{user.get_username()} is already a member.", code="already_member") from None


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
    changed = {}
    if role is not None and role != membership.role:
        if role not in WRITE_ROLES and membership.role in WRITE_ROLES:
            transaction.on_commit(_unassign(workspace, user_id, actor), robust=True)
        changed["role"] = role
    if wip_limit is not None and wip_limit != membership.wip_limit:
        if membership.wip_limit and (wip_limit == 0 or wip_limit > membership.wip_limit):
            transaction.on_commit(partial(fill_for_persons, workspace.pk, [user_id]), robust=True)
        changed["wip_limit"] = wip_limit
    for name, value in changed.items():
        setattr(membership, name, value)
    if changed:
        membership.save(update_fields=list(changed))
    return membership


@transaction.atomic
def member_remove(*, workspace: Workspace, user_id, actor=None) -> None:
    """Remove a member; their tasks are unassigned on every board after commit."""
    _lock_membership(workspace, user_id, losing_owner="removed").delete()
    transaction.on_commit(_unassign(workspace, user_id, actor), robust=True)


def _unassign(workspace: Workspace, user_id, actor):
    return partial(unassign_everywhere, workspace_id=workspace.pk, user_id=user_id, actor=actor)


@transaction.atomic
def invite_create(
    *, workspace: Workspace, role: str, actor, expires_in_days: int = INVITE_DAYS_DEFAULT
) -> tuple[Invite, str]:
    """A new invite and its token (shown once: only its hash is kept)."""
    quotas.check_open_invites(workspace=workspace)
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
    return Invite.objects.select_related("workspace").filter(token_hash=hash_invite(token)).first()


class InviteUnusable(Conflict):
    def __init__(self, state: InviteState):
        messages = {
            InviteState.USED: "This invite link has already been used.",
            InviteState.REVOKED: "This invite link has been revoked.",
            InviteState.EXPIRED: "This invite link has expired.",
        }
        super().__init__(messages[state], code=f"invite_{state}")
        self.state = state


@transaction.atomic
def invite_accept(*, token: str, user) -> Membership:
    """Join the invite's workspace as `user`; the link is used up. Someone who is already a
    member keeps their role (an invite never demotes) and leaves the link unused."""
    invite = Invite.objects.select_for_update().filter(token_hash=hash_invite(token)).first()
    if invite is None:
        raise Invite.DoesNotExist
    state = invite.state(timezone.now())
    if state is not InviteState.OPEN:
        raise InviteUnusable(state)
    existing = Membership.objects.filter(workspace_id=invite.workspace_id, user=user).first()
    if existing is not None:
        return existing
    membership = Membership.objects.create(workspace_id=invite.workspace_id, user=user, role=invite.role)
    invite.used_by, invite.used_at = user, timezone.now()
    invite.save(update_fields=["used_by", "used_at"])
    return membership
