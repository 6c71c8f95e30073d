"""Who may see and change a workspace's objects.

Non-members get 404 (existence is not leaked), viewers get 403 on writes.
"""

from django.http import Http404

from kandev.errors import Forbidden
from workflows.models import Membership, Role

WRITE_ROLES = {Role.OWNER, Role.MEMBER}


def role_in(user, workspace_id) -> str | None:
    if not user.is_authenticated:
        return None
    return (
        Membership.objects.filter(workspace_id=workspace_id, user=user).values_list("role", flat=True).first()
    )


def require_role(user, workspace_id, *, write: bool = False, owner: bool = False) -> str:
    return check_role(role_in(user, workspace_id), write=write, owner=owner)


def check_role(role: str | None, *, write: bool = False, owner: bool = False) -> str:
    """`require_role` for a role the caller already read (joined into its own query)."""
    if role is None:
        raise Http404
    if owner and role != Role.OWNER:
        raise Forbidden("Only a workspace owner may do this.")
    if write and role not in WRITE_ROLES:
        raise Forbidden("Viewers cannot change this workspace.")
    return role
