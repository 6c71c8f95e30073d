"""Invitations by username or e-mail: an owner names a person, the person
accepts or declines; nobody joins without consent.

The owner's answer never says whether the address names an account: making an invitation
does the same work either way (one look-up, one write) and answers with the invitation as
given. Only the invitee, signed in, sees it.
"""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from common.errors import Conflict
from teams.models import Invitation, InvitationState
from workflows.access import still_holds
from workflows.models import Membership, Role, Workspace


def account_named(*, username: str = "", email: str = ""):
    """The active account a username (exact) or an e-mail address (case-insensitive, held by
    exactly one account) names, or None."""
    users = get_user_model().objects.filter(is_active=True)
    if username:
        return users.filter(username=username).first()
    matches = list(users.filter(email__iexact=email)[:2])
    return matches[0] if len(matches) == 1 else None


@transaction.atomic
def invitation_create(
    *, workspace: Workspace, actor, role: str, wip_limit: int = 0, username: str = "", email: str = ""
) -> Invitation:
    """Invite the person `username` or `email` names; inviting them again while they have not
    answered updates that invitation. A username already in the member list (which every
    member sees) is a 409; anything else is answered alike."""
    invitee = account_named(username=username, email=email)
    if username and Membership.objects.filter(workspace=workspace, user__username=username).exists():
        raise Conflict(f"{username} is already a member.", code="already_member")
    invitation, _ = Invitation.objects.update_or_create(
        workspace=workspace,
        username=username,
        email=email.lower(),
        state=InvitationState.PENDING,
        defaults={"invitee": invitee, "role": role, "wip_limit": wip_limit, "created_by": actor},
    )
    return invitation


def _pending_for(user, invitation_id):
    """The user's own pending invitation, locked; Invitation.DoesNotExist for anyone else's."""
    return (
        Invitation.objects.select_for_update(of=("self",))
        .select_related("workspace", "created_by")
        .get(pk=invitation_id, invitee=user, state=InvitationState.PENDING)
    )


@transaction.atomic
def invitation_accept(*, invitation_id, user) -> Invitation:
    """Join as the invitation says, if whoever made it is still an owner. Someone already a
    member keeps their role (an invitation never demotes)."""
    invitation = _pending_for(user, invitation_id)
    if not still_holds(invitation.created_by, invitation.workspace_id, owner=True):
        raise Conflict(
            "This invitation was withdrawn: whoever sent it is no longer an owner.", code="invitation_withdrawn"
        )
    Membership.objects.get_or_create(
        workspace_id=invitation.workspace_id,
        user=user,
        defaults={"role": invitation.role, "wip_limit": invitation.wip_limit},
    )
    return _answer(invitation, InvitationState.ACCEPTED)


@transaction.atomic
def invitation_decline(*, invitation_id, user) -> Invitation:
    return _answer(_pending_for(user, invitation_id), InvitationState.DECLINED)


@transaction.atomic
def invitation_withdraw(*, workspace: Workspace, invitation_id) -> None:
    """An owner takes back an unanswered invitation (Invitation.DoesNotExist if none)."""
    invitation = Invitation.objects.select_for_update().get(
        pk=invitation_id, workspace=workspace, state=InvitationState.PENDING
    )
    _answer(invitation, InvitationState.WITHDRAWN)


def _answer(invitation: Invitation, state: InvitationState) -> Invitation:
    invitation.state, invitation.answered_at = state, timezone.now()
    invitation.save(update_fields=["state", "answered_at"])
    return invitation


def invitations_for(user):
    """The invitations waiting for `user`'s answer, to workspaces they are not in, from
    people who are still active owners there (`still_holds`, as a query)."""
    sender_is_owner = Membership.objects.filter(
        workspace=OuterRef("workspace"), user=OuterRef("created_by"), user__is_active=True, role=Role.OWNER
    )
    return (
        Invitation.objects.filter(Exists(sender_is_owner), invitee=user, state=InvitationState.PENDING)
        .exclude(workspace__memberships__user=user)
        .select_related("workspace", "created_by")
        .order_by("-created_at", "id")
    )


def pending_in(workspace: Workspace):
    """A workspace's unanswered invitations, for its owners."""
    return Invitation.objects.filter(workspace=workspace, state=InvitationState.PENDING).select_related("created_by")
