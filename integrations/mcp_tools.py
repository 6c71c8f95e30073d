"""kandev's MCP server: board tools for agents, with the REST API's names and rules.

The same tools serve stdio (`manage.py mcp_server --user <name>`, acting as that user) and
streamable HTTP (`/mcp/`, acting as the owner of the request's API token). Every write goes
through the same services as the REST API, membership is checked the same way, and a
domain refusal comes back as a tool error whose text is the full message (for a WIP
refusal: step name, limit and occupancy) with the REST error body as structured content.
"""

import functools
import json
from typing import Annotated, Any

from django.contrib.auth import get_user_model
from django.db import close_old_connections
from django.http import Http404
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from boards import admission, structure
from boards.links import link_data, link_delete, links_of
from boards.links_api import create_link, writable_link
from boards.messages import step_data, task_data
from boards.models import Priority, Task
from boards.selectors import group_rows, step_counts
from boards.serializers import TaskCreateSerializer, TaskMoveSerializer, TaskUpdateSerializer
from boards.services import task_update
from boards.snapshots import board_snapshot
from common.errors import Invalid, KandevError
from common.validation import parse_uuid, validated
from workflows import access
from workflows.access import check_role, visible_workflows
from workflows.models import StepGroup, Workflow, WorkflowStep
from workflows.serializers import StepGroupUpdateSerializer, StepUpdateSerializer

USER_SCOPE_KEY = "kandev.user_id"
UNCHANGED = ""  # update_step: a pull_from_step_id left out keeps the feeder
KEEP_ASSIGNEE = 0  # update_task: no user has id 0, so an assignee_id left out keeps the assignee


class NotFound(KandevError):
    status_code = 404
    code = "not_found"


class NotAuthenticated(KandevError):
    status_code = 401
    code = "not_authenticated"


def tool_error(error: KandevError) -> CallToolResult:
    text = error.detail
    if isinstance(error, Invalid):
        text = f"{text} {json.dumps(error.extra['errors'])}"
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=error.as_body(),
        is_error=True,
    )


def given(**arguments) -> dict:
    """Arguments left at None count as not given."""
    return {name: value for name, value in arguments.items() if value is not None}


def board_tool(fn):
    """Run a tool like a request: fresh database connections, domain errors as tool errors."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        close_old_connections()
        try:
            return fn(*args, **kwargs)
        except KandevError as error:
            return tool_error(error)
        except Http404:
            return tool_error(NotFound("Not found."))
        finally:
            close_old_connections()

    return run


def build_server(*, user_id=None) -> MCPServer:
    """The MCP server. `user_id` fixes the acting user (stdio); without it each HTTP request
    acts as the user its token authenticated (the ASGI wrapper puts it in the scope)."""
    server = MCPServer(
        "kandev",
        instructions=(
            "Kanban boards with server-enforced WIP limits. A full step refuses new work: "
            "the refusal names the step, its limit and its occupancy."
        ),
    )

    def acting_user(ctx: Context):
        acting = user_id
        if acting is None:
            request = ctx.request_context.request
            acting = request.scope.get(USER_SCOPE_KEY) if request is not None else None
        user = get_user_model().objects.filter(pk=acting, is_active=True).first() if acting else None
        if user is None:
            raise NotAuthenticated("Authentication required.")
        return user

    def member_workflow(user, workflow_id: str) -> Workflow:
        workflow = visible_workflows(user).filter(pk=parse_uuid(workflow_id, "workflow_id")).first()
        if workflow is None:
            raise NotFound("Not found.")
        return workflow

    def steps_of(workflow: Workflow) -> list[dict]:
        steps = list(workflow.steps.order_by("position"))
        counts = step_counts([s.pk for s in steps])
        return [step_data(s, *counts[s.pk]) for s in steps]

    @server.tool()
    @board_tool
    def list_workflows(ctx: Context, workspace_id: str | None = None) -> list[dict[str, Any]]:
        """The workflows (boards) you can see, optionally of one workspace."""
        workflows = visible_workflows(acting_user(ctx))
        if workspace_id:
            workflows = workflows.filter(workspace_id=parse_uuid(workspace_id, "workspace_id"))
        return [
            {
                "id": str(w.pk),
                "workspace_id": str(w.workspace_id),
                "name": w.name,
                "description": w.description,
                "version": w.version,
            }
            for w in workflows.order_by("created_at", "id")
        ]

    @server.tool()
    @board_tool
    def list_steps(ctx: Context, workflow_id: str) -> list[dict[str, Any]]:
        """The steps of a workflow in position order, with kind (backlog, active or done),
        wip_limit, pull_from_step_id, on_full, occupied, queued and over_limit."""
        return steps_of(member_workflow(acting_user(ctx), workflow_id))

    @server.tool()
    @board_tool
    def get_board(ctx: Context, workflow_id: str) -> dict[str, Any]:
        """The whole board: the workflow, its steps with their counts, their tasks, and its
        step groups (a WIP limit shared by several steps)."""
        return board_snapshot(workflow=member_workflow(acting_user(ctx), workflow_id))

    @server.tool()
    @board_tool
    def create_task(
        ctx: Context,
        title: str,
        workflow_id: str | None = None,
        step_id: str | None = None,
        description: str = "",
        priority: str = Field("medium", description="critical, high, medium, low or none"),
        external_ref: str | None = None,
        assignee_id: int | None = Field(None, description="A member's or owner's user id; counts on their WIP limit"),
        class_of_service: str = Field("standard", description='"standard" or "expedite"'),
    ) -> dict[str, Any]:
        """Create a task in a step (or the workflow's start step). A full step, group or
        assignee refuses it (or the step queues it when in queue mode: then `admitted` is false)."""
        user = acting_user(ctx)
        data = validated(
            TaskCreateSerializer,
            given(
                title=title,
                workflow_id=workflow_id,
                step_id=step_id,
                description=description,
                priority=priority,
                external_ref=external_ref,
                assignee_id=assignee_id,
                class_of_service=class_of_service,
            ),
            context={"user": user},
        )
        result = admission.task_create(
            workflow=data["workflow"],
            actor=user,
            step=data["step"],
            title=data["title"],
            description=data["description"],
            priority=data.get("priority", Priority.MEDIUM),
            external_ref=data.get("external_ref"),
            assignee_id=data.get("assignee_id"),
            class_of_service=data["class_of_service"],
        )
        return task_data(result.task)

    @server.tool()
    @board_tool
    def update_task(
        ctx: Context,
        task_id: str,
        title: str | None = None,
        description: str | None = None,
        priority: str | None = Field(None, description="critical, high, medium, low or none; omit to keep"),
        assignee_id: int | None = Field(KEEP_ASSIGNEE, description="A user id; null = nobody; omit to keep"),
        class_of_service: str | None = Field(None, description='"standard" or "expedite"; omit to keep'),
    ) -> dict[str, Any]:
        """Edit a task (only the arguments given change). A new assignee counts on their WIP
        limit, and marking a task expedite on the board's expedite limit: either may be refused."""
        user = acting_user(ctx)
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        changes = given(title=title, description=description, priority=priority, class_of_service=class_of_service)
        if assignee_id != KEEP_ASSIGNEE:
            changes["assignee_id"] = assignee_id
        data = validated(TaskUpdateSerializer, changes, context={"workspace_id": task.workflow.workspace_id})
        if data:
            task = task_update(task=task, actor=user, **data)
        return task_data(task)

    @server.tool()
    @board_tool
    def move_task(ctx: Context, task_id: str, step_id: str, position: int | None = None) -> dict[str, Any]:
        """Move a task to a step, at index `position` of its order (0 = first; omitted: the
        end); moving it to its own step reorders it."""
        user = acting_user(ctx)
        data = validated(TaskMoveSerializer, given(step_id=step_id, position=position))
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        result = admission.task_move(
            task=task,
            to_step=data["step_id"],
            actor=user,
            position=data.get("position"),
        )
        return task_data(result.task)

    @server.tool()
    @board_tool
    def list_links(ctx: Context, task_id: str) -> list[dict[str, Any]]:
        """A task's links: the tasks it is blocked by and the tasks it blocks. A task with an
        unfinished blocker (one not in a done step) is never pulled."""
        task = access.member_object(Task, acting_user(ctx), parse_uuid(task_id, "task_id"))
        if task is None:
            raise NotFound("Not found.")
        return [link_data(link) for link in links_of(task)]

    @server.tool()
    @board_tool
    def add_link(
        ctx: Context,
        task_id: str,
        blocks_task_id: str | None = Field(None, description="The task this one blocks"),
        blocked_by_task_id: str | None = Field(None, description="The task this one is blocked by"),
    ) -> dict[str, Any]:
        """Link two tasks of one workspace (give one of blocks_task_id, blocked_by_task_id).
        A link that would make a cycle is refused."""
        user = acting_user(ctx)
        body = given(blocks_task_id=blocks_task_id, blocked_by_task_id=blocked_by_task_id)
        return link_data(create_link(user, parse_uuid(task_id, "task_id"), body))

    @server.tool()
    @board_tool
    def remove_link(ctx: Context, link_id: str) -> dict[str, Any]:
        """Remove a link: its dependent may be pulled at once."""
        user = acting_user(ctx)
        link_delete(link=writable_link(user, parse_uuid(link_id, "link_id")), actor=user)
        return {"id": link_id, "removed": True}

    @server.tool()
    @board_tool
    def update_step(
        ctx: Context,
        step_id: str,
        wip_limit: int | None = Field(None, description="0 = unlimited; omit to keep"),
        pull_from_step_id: str | None = Field(
            UNCHANGED, description="The feeder step's id; null = no feeder; omit to keep"
        ),
        on_full: str | None = Field(None, description='"reject" or "queue"; omit to keep'),
        kind: str | None = Field(None, description='"backlog", "active" or "done"; omit to keep'),
    ) -> dict[str, Any]:
        """Read a step's kind, wip_limit, pull_from_step_id and on_full, or change them (only
        the arguments given change). Raising a limit or setting a feeder pulls at once."""
        user = acting_user(ctx)
        step = access.member_object(WorkflowStep, user, parse_uuid(step_id, "step_id"))
        if step is None:
            raise NotFound("Not found.")
        changes = given(wip_limit=wip_limit, on_full=on_full, kind=kind)
        if pull_from_step_id != UNCHANGED:
            changes["pull_from_step_id"] = pull_from_step_id
        if changes:
            check_role(step.member_role, write=True)
            step = structure.step_update(
                step=step, actor=user, **validated(StepUpdateSerializer, changes, partial=True)
            )
        occupied, queued = step_counts([step.pk])[step.pk]
        return step_data(step, occupied, queued)

    @server.tool()
    @board_tool
    def list_groups(ctx: Context, workflow_id: str) -> list[dict[str, Any]]:
        """The step groups of a workflow: each one's name, wip_limit (shared by its steps),
        step_ids, occupied (the sum over its steps) and over_limit."""
        workflow = member_workflow(acting_user(ctx), workflow_id)
        return group_rows(workflow.step_groups.order_by("created_at", "id"))

    @server.tool()
    @board_tool
    def update_group(
        ctx: Context,
        group_id: str,
        name: str | None = Field(None, description="omit to keep"),
        wip_limit: int | None = Field(None, description="at least 1; omit to keep"),
        step_ids: Annotated[
            list[str] | None, Field(description="at least 2 steps of its workflow, none in another group; omit to keep")
        ] = None,
    ) -> dict[str, Any]:
        """Read a step group's name, wip_limit and step_ids, or change them (only the arguments
        given change). Raising the limit or adding a step pulls at once."""
        user = acting_user(ctx)
        group = access.member_object(StepGroup, user, parse_uuid(group_id, "group_id"))
        if group is None:
            raise NotFound("Not found.")
        changes = given(name=name, wip_limit=wip_limit, step_ids=step_ids)
        if changes:
            check_role(group.member_role, write=True)
            fields = validated(StepGroupUpdateSerializer, changes, partial=True)
            group = structure.group_update(group=group, actor=user, **fields)
        return group_rows([group])[0]

    return server
