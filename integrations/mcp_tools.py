"""kandev's MCP server: board tools for agents, with the REST API's names and rules.

The same tools serve stdio (`manage.py mcp_server --user <name>`, acting as that user) and
streamable HTTP (`/mcp/`, acting as the owner of the request's API token). Every write goes
through the same services as the REST API, membership is checked the same way, and a
domain refusal comes back as a tool error whose text is the full message (for a WIP
refusal: step name, limit and occupancy) with the REST error body as structured content.
"""

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.db import close_old_connections
from django.http import Http404
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from boards import admission, checklists, labels, structure
from boards.attachment_api import AttachmentSerializer
from boards.blocker_types import blocker_type_data
from boards.card_serializers import (
    ChecklistItemSerializer,
    ChecklistItemUpdateSerializer,
    LabelSerializer,
    LabelUpdateSerializer,
    item_data,
)
from boards.comment_api import CommentBodySerializer
from boards.comments import comment_create, comment_data, comments_of
from boards.links import link_data, link_delete, links_of
from boards.links_api import create_link, writable_link
from boards.messages import label_data, step_data, task_data
from boards.models import Attachment, BlockerType, ChecklistItem, Label, Priority, Task
from boards.outlook import task_outlook
from boards.selectors import group_rows, lane_rows, step_counts
from boards.serializers import BlockSerializer, TaskCreateSerializer, TaskMoveSerializer, TaskUpdateSerializer
from boards.services import task_block, task_unblock, task_update
from boards.snapshots import board_snapshot
from boards.waiting import task_waiting
from common.db import one_read
from common.errors import Invalid, KandevError
from common.validation import parse_uuid, validated
from workflows import access
from workflows.access import check_role, require_role, visible, visible_workflows
from workflows.models import Lane, StepGroup, Workflow, WorkflowStep
from workflows.serializers import LaneSerializer, LaneUpdateSerializer, StepGroupUpdateSerializer, StepUpdateSerializer

USER_SCOPE_KEY = "kandev.user_id"
UNCHANGED = ""  # update_step: a pull_from_step_id left out keeps the feeder
KEEP_ASSIGNEE = 0  # update_task: no user has id 0, so an assignee_id left out keeps the assignee
COMMENTS_LISTED = 1000  # list_comments: a task's comments, up to as many as one REST page holds


@dataclass(frozen=True)
class Toolkit:
    """What an app above this one needs to add tools of its own: the server, the decorator
    that runs a tool like a request, and the membership checks every tool makes."""

    server: MCPServer
    acting_user: Callable[[Context], Any]
    member_workflow: Callable[[Any, str], Workflow]

    def tool(self, fn):
        return self.server.tool()(board_tool(fn))


_added_tools: list[Callable[[Toolkit], None]] = []


def register(add_tools: Callable[[Toolkit], None]) -> None:
    """An app above integrations (flow) adds its tools from its AppConfig.ready(), so this
    module never reads that app's rules."""
    _added_tools.append(add_tools)


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


def workspace_rows(model, user, workspace_id: str):
    """A workspace's labels or blocker types, by name, for someone who may see them (none
    for anyone else)."""
    rows = visible(model.objects.all(), user, "workspace")
    return rows.filter(workspace_id=parse_uuid(workspace_id, "workspace_id")).order_by("name", "id")


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
    def get_task(ctx: Context, task_id: str) -> dict[str, Any]:
        """A task as its detail shows it: its fields, why it waits (`waiting`: its place in
        the pull order), and its outlook: `forecast` (when a waiting task will likely start
        and be done, at 50% and 85%) and `sle` (its age in days against its service level)."""
        user = acting_user(ctx)
        with one_read():
            task = access.member_object(Task, user, parse_uuid(task_id, "task_id"))
            if task is None:
                raise NotFound("Not found.")
            waiting = task_waiting(task)
            return as_json({**task_data(task), "waiting": waiting, **task_outlook(task, waiting)})

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
        lane_id: str | None = Field(None, description="Its lane (a row of the board); omit: the first"),
    ) -> dict[str, Any]:
        """Create a task in a step (or the workflow's start step) and lane. A full cell, step,
        lane, group or assignee refuses it (or the step queues it when in queue mode: then
        `admitted` is false)."""
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
                lane_id=lane_id,
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
            lane_id=data.get("lane_id"),
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
        label_ids: Annotated[
            list[str] | None, Field(description="All the task's labels (ids of its workspace's); omit to keep")
        ] = None,
        due_at: str | None = Field(
            UNCHANGED, description='A date ("2026-12-05": that whole day) or a moment with its offset; null clears'
        ),
    ) -> dict[str, Any]:
        """Edit a task (only the arguments given change). A new assignee counts on their WIP
        limit, and marking a task expedite on the board's expedite limit: either may be refused."""
        user = acting_user(ctx)
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        changes = given(
            title=title,
            description=description,
            priority=priority,
            class_of_service=class_of_service,
            label_ids=label_ids,
        )
        if assignee_id != KEEP_ASSIGNEE:
            changes["assignee_id"] = assignee_id
        if due_at != UNCHANGED:
            changes["due_at"] = due_at
        data = validated(TaskUpdateSerializer, changes, context={"workspace_id": task.workflow.workspace_id})
        if data:
            task = task_update(task=task, actor=user, **data)
        return task_data(task)

    @server.tool()
    @board_tool
    def move_task(
        ctx: Context,
        task_id: str,
        step_id: str,
        position: int | None = None,
        lane_id: str | None = Field(None, description="The lane it moves to; omit: it stays in its own"),
    ) -> dict[str, Any]:
        """Move a task to a step (and lane), at index `position` of its order (0 = first;
        omitted: the end); moving it to its own step and lane reorders it."""
        user = acting_user(ctx)
        data = validated(TaskMoveSerializer, given(step_id=step_id, position=position, lane_id=lane_id))
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        result = admission.task_move(
            task=task,
            to_step=data["step_id"],
            actor=user,
            position=data.get("position"),
            lane_id=data.get("lane_id"),
        )
        return task_data(result.task)

    @server.tool()
    @board_tool
    def list_comments(ctx: Context, task_id: str) -> list[dict[str, Any]]:
        """A task's comments, oldest first: author, body (Markdown), created_at, edited_at and
        mentions (the usernames of the workspace's members it names with @username)."""
        task = access.member_object(Task, acting_user(ctx), parse_uuid(task_id, "task_id"))
        if task is None:
            raise NotFound("Not found.")
        return [comment_data(c, c.mentions.all()) for c in comments_of(task)[:COMMENTS_LISTED]]

    @server.tool()
    @board_tool
    def add_comment(
        ctx: Context, task_id: str, body: str = Field(description="Markdown; @username mentions a member")
    ) -> dict[str, Any]:
        """Comment on a task (members and owners). `@username` mentions a member of the
        workspace; a name that is nobody's there stays plain text."""
        user = acting_user(ctx)
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        data = validated(CommentBodySerializer, {"body": body})
        return comment_create(task=task, author=user, body=data["body"])

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
    def block_task(
        ctx: Context,
        task_id: str,
        reason: str,
        blocked_type_id: str | None = Field(
            None, description="A blocker type of the task's workspace (list_blocker_types); omit for none"
        ),
    ) -> dict[str, Any]:
        """Block a task with a reason (and optionally a type): it keeps its slot but is never
        pulled. Blocking a blocked task replaces its reason and type."""
        user = acting_user(ctx)
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        data = validated(BlockSerializer, given(reason=reason, blocked_type_id=blocked_type_id))
        return task_data(
            task_block(task=task, actor=user, reason=data["reason"], blocked_type_id=data.get("blocked_type_id"))
        )

    @server.tool()
    @board_tool
    def unblock_task(ctx: Context, task_id: str) -> dict[str, Any]:
        """Unblock a task (its reason and type are cleared): it may be pulled at once."""
        user = acting_user(ctx)
        return task_data(task_unblock(task=access.writable(Task, user, parse_uuid(task_id, "task_id")), actor=user))

    @server.tool()
    @board_tool
    def list_blocker_types(ctx: Context, workspace_id: str) -> list[dict[str, Any]]:
        """A workspace's blocker types (id, name), by name: give an id to block_task."""
        found = workspace_rows(BlockerType, acting_user(ctx), workspace_id)
        return [blocker_type_data(blocker_type) for blocker_type in found]

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

    @server.tool()
    @board_tool
    def list_labels(ctx: Context, workspace_id: str) -> list[dict[str, Any]]:
        """A workspace's labels (id, name, color), by name: give their ids to update_task."""
        return [label_data(label) for label in workspace_rows(Label, acting_user(ctx), workspace_id)]

    @server.tool()
    @board_tool
    def save_label(
        ctx: Context,
        label_id: str | None = Field(None, description="The label to change; omit to create one"),
        workspace_id: str | None = Field(None, description="The workspace of a new label"),
        name: str | None = Field(None, description="Unique in the workspace; omit to keep"),
        color: str | None = Field(None, description="gray, red, orange, yellow, green, teal, blue, purple or pink"),
    ) -> dict[str, Any]:
        """Create a label in a workspace, or rename or recolour one: every board of the
        workspace shows the change at once."""
        user = acting_user(ctx)
        if label_id is None:
            data = validated(LabelSerializer, given(workspace_id=workspace_id, name=name, color=color))
            workspace = access.member_workspace(user, data["workspace_id"], write=True)
            return label_data(
                labels.label_create(workspace_id=workspace.pk, actor=user, name=data["name"], color=data["color"])
            )
        label = access.member_row(Label.objects.all(), user, label_id)
        changes = validated(LabelUpdateSerializer, given(name=name, color=color))
        if changes:
            require_role(user, label.workspace_id, write=True)
            label = labels.label_update(label=label, actor=user, **changes)
        return label_data(label)

    @server.tool()
    @board_tool
    def delete_label(ctx: Context, label_id: str) -> dict[str, Any]:
        """Delete a label: every task of the workspace that carries it loses it."""
        user = acting_user(ctx)
        label = access.member_row(Label.objects.all(), user, label_id)
        require_role(user, label.workspace_id, write=True)
        labels.label_delete(label=label, actor=user)
        return {"deleted": label_id}

    @server.tool()
    @board_tool
    def list_checklist(ctx: Context, task_id: str) -> list[dict[str, Any]]:
        """A task's checklist items (id, text, done, position) in order."""
        task = access.member_object(Task, acting_user(ctx), parse_uuid(task_id, "task_id"))
        if task is None:
            raise NotFound("Not found.")
        return [item_data(item) for item in ChecklistItem.objects.filter(task_id=task.pk)]

    @server.tool()
    @board_tool
    def add_checklist_item(ctx: Context, task_id: str, text: str) -> dict[str, Any]:
        """Add an item at the end of a task's checklist, not done."""
        user = acting_user(ctx)
        task = access.writable(Task, user, parse_uuid(task_id, "task_id"))
        data = validated(ChecklistItemSerializer, {"text": text})
        return item_data(checklists.checklist_add(task=task, actor=user, text=data["text"]))

    @server.tool()
    @board_tool
    def update_checklist_item(
        ctx: Context,
        item_id: str,
        done: bool | None = Field(None, description="Tick (true) or untick; omit to keep"),
        text: str | None = Field(None, description="omit to keep"),
        position: int | None = Field(None, description="Its new index in the list, 0 = first; omit to keep"),
    ) -> dict[str, Any]:
        """Tick, edit or move a checklist item (only the arguments given change)."""
        user = acting_user(ctx)
        item = checklists.writable_item(user, item_id)
        changes = validated(ChecklistItemUpdateSerializer, given(done=done, text=text, position=position))
        return item_data(checklists.checklist_update(item=item, actor=user, **changes))

    @server.tool()
    @board_tool
    def delete_checklist_item(ctx: Context, item_id: str) -> dict[str, Any]:
        """Delete a checklist item."""
        user = acting_user(ctx)
        checklists.checklist_delete(item=checklists.writable_item(user, item_id), actor=user)
        return {"deleted": item_id}

    @server.tool()
    @board_tool
    def list_attachments(ctx: Context, task_id: str) -> list[dict[str, Any]]:
        """The files attached to a task, oldest first: each one's id, name, size (bytes),
        content_type, uploaded_by (a username), created_at and url (where the REST API, with
        an API token, downloads it). Files are attached in the browser or through the API."""
        task = access.member_object(Task, acting_user(ctx), parse_uuid(task_id, "task_id"))
        if task is None:
            raise NotFound("Not found.")
        attachments = Attachment.objects.filter(task=task).select_related("uploaded_by")
        return [dict(data) for data in AttachmentSerializer(attachments, many=True).data]

    @server.tool()
    @board_tool
    def list_lanes(ctx: Context, workflow_id: str) -> list[dict[str, Any]]:
        """The lanes (rows) of a workflow, in board order: each one's name, position,
        wip_limit (over its tasks in active steps; 0 = none), is_expedite, occupied, over_limit."""
        workflow = member_workflow(acting_user(ctx), workflow_id)
        return lane_rows(workflow.lanes.order_by("position", "created_at", "id"))

    @server.tool()
    @board_tool
    def create_lane(
        ctx: Context,
        workflow_id: str,
        name: str,
        position: int | None = Field(None, description="0 = first; omit: last"),
        wip_limit: int = Field(0, description="0 = no limit"),
        is_expedite: bool = Field(False, description="The board's expedite lane (at most one)"),
    ) -> dict[str, Any]:
        """Add a lane to a workflow."""
        user = acting_user(ctx)
        workflow = access.member_workflow(user, parse_uuid(workflow_id, "workflow_id"))
        check_role(workflow.member_role, write=True)
        data = dict(
            validated(
                LaneSerializer,
                given(
                    workflow_id=workflow_id, name=name, position=position, wip_limit=wip_limit, is_expedite=is_expedite
                ),
            )
        )
        data.pop("workflow_id")
        return lane_rows([structure.lane_create(workflow=workflow, actor=user, **data)])[0]

    @server.tool()
    @board_tool
    def update_lane(
        ctx: Context,
        lane_id: str,
        name: str | None = Field(None, description="omit to keep"),
        position: int | None = Field(None, description="omit to keep"),
        wip_limit: int | None = Field(None, description="0 = no limit; omit to keep"),
        is_expedite: bool | None = Field(None, description="omit to keep"),
    ) -> dict[str, Any]:
        """Read a lane, or change it (only the arguments given change). Raising its limit pulls at once."""
        user = acting_user(ctx)
        lane = access.member_object(Lane, user, parse_uuid(lane_id, "lane_id"))
        if lane is None:
            raise NotFound("Not found.")
        changes = given(name=name, position=position, wip_limit=wip_limit, is_expedite=is_expedite)
        if changes:
            check_role(lane.member_role, write=True)
            lane = structure.lane_update(
                lane=lane, actor=user, **validated(LaneUpdateSerializer, changes, partial=True)
            )
        return lane_rows([lane])[0]

    toolkit = Toolkit(server=server, acting_user=acting_user, member_workflow=member_workflow)
    for add_tools in _added_tools:
        add_tools(toolkit)
    return server


def as_json(data: dict) -> dict:
    """Dates and instants as the REST API writes them."""
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))
