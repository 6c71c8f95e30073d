"""Writes to workspaces, and new workflows (empty, from a template, or imported). Changes
to an existing board (its settings, steps, groups, deletion) are board changes:
boards/structure.py."""

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.text import slugify

from common.errors import Invalid, QuotaExceeded
from workflows.models import Membership, OnSessionLimit, Role, Workflow, Workspace, create_first_lane
from workflows.portable import build_steps, templates
from workflows.signals import session_limits_changed_on_commit


@transaction.atomic
def workspace_create(*, name: str, owner, slug: str = "", max_concurrent_sessions=None) -> Workspace:
    _check_workspace_quota(owner=owner)
    base = slugify(slug or name)[:90] or "workspace"
    candidate, n = base, 1
    while Workspace.objects.filter(slug=candidate).exists():
        n += 1
        candidate = f"{base}-{n}"
    workspace = Workspace.objects.create(name=name, slug=candidate, max_concurrent_sessions=max_concurrent_sessions)
    Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
    return workspace


@transaction.atomic
def workflow_create(
    *,
    workspace: Workspace,
    name: str,
    description: str = "",
    template: str | None = None,
    max_parallel_sessions: int = 0,
    on_session_limit: str = OnSessionLimit.QUEUE,
    expedite_limit: int = 1,
) -> Workflow:
    if template is not None and template not in templates():
        raise Invalid({"template": [f'Unknown template "{template}". Known: {", ".join(sorted(templates()))}.']})
    workflow = Workflow.objects.create(
        workspace=workspace,
        name=name,
        description=description,
        max_parallel_sessions=max_parallel_sessions,
        on_session_limit=on_session_limit,
        expedite_limit=expedite_limit,
    )
    create_first_lane(workflow)
    if template is not None:
        build_steps(workflow, templates()[template]["steps"])
    return workflow


@transaction.atomic
def workspace_update(*, workspace: Workspace, **fields) -> Workspace:
    """PATCH a workspace (owners). A changed session limit shows on every board of the
    workspace, and queued sessions that now fit start."""
    limit_changed = fields.get("max_concurrent_sessions", workspace.max_concurrent_sessions) != (
        workspace.max_concurrent_sessions
    )
    for name, value in fields.items():
        setattr(workspace, name, value)
    if fields:
        workspace.save(update_fields=list(fields))
    if limit_changed:
        session_limits_changed_on_commit(workspace_id=workspace.pk)
    return workspace


def _check_workspace_quota(*, owner) -> None:
    """An account may own KANDEV_MAX_WORKSPACES_PER_USER workspaces (0: any number). Counted
    with the account's row locked, inside the workspace create's transaction: exact."""
    limit = settings.KANDEV_MAX_WORKSPACES_PER_USER
    if not limit:
        return
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
    if Membership.objects.filter(user=owner, role=Role.OWNER).count() >= limit:
        raise QuotaExceeded(
            quota="workspaces",
            limit=limit,
            detail=f"You own {limit} workspaces, the most one account may own here. "
            "Leave or hand over one you no longer need, or ask your administrator.",
        )
