"""Who may touch what: the one module every door asks (REST, MCP, pages, the WebSocket
consumer, runners' and integrations' APIs).

Non-members get 404 (existence is not leaked), viewers get 403 on writes. The lookups of a
step or a task for a write are hand-written (common/sql.py says why): every create and move
runs one, and the ORM's join-and-annotate costs a measured share of an admission
(docs/benchmarks.md).
"""

import functools

from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import F
from django.http import Http404

from common import sql
from common.errors import Forbidden, Invalid
from common.validation import parse_uuid
from workflows.models import Membership, Role, Workflow, WorkflowStep, Workspace

WRITE_ROLES = {Role.OWNER, Role.MEMBER}


def memberships_of(user):
    """The user's memberships: the workspaces they belong to, with their role in each."""
    return Membership.objects.filter(user=user)


def writable_workspaces(user):
    """Ids of the workspaces `user` may change (owner or member), as a subquery."""
    return memberships_of(user).filter(role__in=WRITE_ROLES).values("workspace_id")


def visible(queryset, user, workspace: str = "workflow__workspace"):
    """The rows of `queryset` in workspaces `user` belongs to; to the user the rest do not
    exist. `workspace` is the path from the model to its workspace ("" for Workspace)."""
    prefix = f"{workspace}__" if workspace else ""
    return queryset.filter(**{f"{prefix}memberships__user": user})


def visible_workflows(user):
    return visible(Workflow.objects.all(), user, "workspace")


def role_in(user, workspace_id) -> str | None:
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(workspace_id=workspace_id, user=user).values_list("role", flat=True).first()


def assignable(workspace_id, user_id) -> bool:
    """May `user_id` be given the workspace's tasks (an owner or a member)?"""
    return Membership.objects.filter(workspace_id=workspace_id, user_id=user_id, role__in=WRITE_ROLES).exists()


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


def still_holds(user, workspace_id, *, write: bool = False, owner: bool = False) -> bool:
    """May `user` still do this (`require_role`'s rule) as an active account? Authority a person
    handed on (an invite link, an intake's secret, a watch's token) lasts only as long as theirs."""
    if user is None or not user.is_active:
        return False
    try:
        check_role(role_in(user, workspace_id), write=write, owner=owner)
    except (Http404, Forbidden):
        return False
    return True


@functools.cache
def _member_object_statement(model, vendor: str) -> str:
    """A workflow, or a step or task by id with its workflow, and the user's role in its workspace."""
    workspace = sql.column(Workflow, "workspace")
    membership = f" JOIN {sql.table(Membership)} m ON m.{sql.column(Membership, 'workspace')} = w.{workspace}"
    of_user = f" AND m.{sql.column(Membership, 'user')} = %s"
    role = f"m.{sql.column(Membership, 'role')}"
    if model is Workflow:
        return (
            f"SELECT {sql.columns(Workflow, 'w')}, {role} FROM {sql.table(Workflow)} w{membership}"
            f" WHERE w.{sql.column(Workflow, 'id')} = %s{of_user}"
        )
    return (
        f"SELECT {sql.columns(model, 'o')}, {sql.columns(Workflow, 'w')}, {role}"
        f" FROM {sql.table(model)} o"
        f" JOIN {sql.table(Workflow)} w ON w.{sql.column(Workflow, 'id')} = o.{sql.column(model, 'workflow')}"
        f"{membership}"
        f" WHERE o.{sql.column(model, 'id')} = %s{of_user}"
    )


def member_object(model, user, pk):
    """(`model` row `pk` with `.member_role`, and a step's or task's `.workflow`) if `user`
    is a member of its workspace, else None (also for a `pk` that is no UUID)."""
    statement = _member_object_statement(model, connection.vendor)
    read = (Workflow,) if model is Workflow else (model, Workflow)
    try:
        rows = sql.fetch(statement, [sql.uuid_param(pk), user.pk], *read)
    except ValidationError:
        return None
    if not rows:
        return None
    ((obj, *workflow, role),) = rows
    if workflow:
        obj.workflow = workflow[0]
    obj.member_role = role
    return obj


def writable(model, user, pk):
    """The row of the URL for a write: 404 unless the user is a member, 403 for a viewer."""
    obj = member_object(model, user, pk)
    if obj is None:
        raise Http404
    check_role(obj.member_role, write=True)
    return obj


def member_row(queryset, user, pk):
    """A row of something a workspace keeps (labels, blocker types: `workspace` on the model)
    by the URL's id; to anyone but a member of its workspace, and for a malformed id, a 404."""
    try:
        pk = parse_uuid(pk, "id")
    except Invalid:
        raise Http404 from None
    row = visible(queryset, user, "workspace").filter(pk=pk).first()
    if row is None:
        raise Http404
    return row


def member_workspace(user, workspace_id, *, write: bool = False, owner: bool = False) -> Workspace:
    """The workspace named in a request body's `workspace_id`: a 400 on that field unless
    `user` is a member (existence is not leaked), then `require_role`'s 403."""
    workspace = visible(Workspace.objects.all(), user, "").filter(pk=workspace_id).first()
    if workspace is None:
        raise Invalid({"workspace_id": ["No such workspace."]})
    require_role(user, workspace.pk, write=write, owner=owner)
    return workspace


def member_step(user, step_id, field: str = "step_id") -> WorkflowStep:
    """A step named in a request body: a 400 on `field` unless the user is a member (existence
    is not leaked). `step.member_role` is the user's role there, read in the same query."""
    step = member_object(WorkflowStep, user, step_id)
    if step is None:
        raise Invalid({field: ["No such step."]})
    return step


def member_workflow(user, workflow_id, field: str = "workflow_id") -> Workflow:
    """A workflow named in a request body, with `.member_role`; a 400 on `field` otherwise."""
    workflow = (
        visible_workflows(user).filter(pk=workflow_id).annotate(member_role=F("workspace__memberships__role")).first()
    )
    if workflow is None:
        raise Invalid({field: ["No such workflow."]})
    return workflow


def placement(user, *, workflow_id=None, step_id=None) -> tuple[Workflow, WorkflowStep | None]:
    """Where a new task goes: the step (which must be in `workflow_id` when both are given)
    or the workflow's start step (`None`), for a user who may write there."""
    if step_id:
        step = member_step(user, step_id)
        if workflow_id and workflow_id != step.workflow_id:
            raise Invalid({"step_id": ["This step is not in the given workflow."]})
        check_role(step.member_role, write=True)
        return step.workflow, step
    workflow = member_workflow(user, workflow_id)
    check_role(workflow.member_role, write=True)
    return workflow, None
