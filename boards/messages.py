"""What a board change looks like to a viewer: tasks and steps as plain JSON values, and
the live message of one committed change."""

from boards.models import Label, Task
from boards.priorities import PRIORITY_NAMES
from boards.sessions import agent_figures, task_sessions
from common import sql
from workflows.models import Lane, StepGroup, WorkflowStep


def iso(value):
    return value.isoformat() if value is not None else None


# A task's JSON: each field, read from the task's attribute of the same
# name, and how its value is written (None: as it is). The one definition of the shape: the
# API, live messages and the board's cards (`card_data`) are written from it.
TASK_JSON = {
    "id": str,
    "workflow_id": str,
    "step_id": str,
    "lane_id": str,
    "title": None,
    "description": None,
    "priority": PRIORITY_NAMES.__getitem__,
    "position": None,
    "admitted": None,
    "queued_at": iso,
    "archived_at": iso,
    "is_ephemeral": None,
    "external_ref": None,
    "blocked_reason": None,
    "blocked_at": iso,
    "blocked_type_id": lambda pk: str(pk) if pk else None,  # its block's type (boards/blocker_types.py)
    "assignee_id": None,
    "class_of_service": None,
    "blocked_by": list,  # ids of its unfinished blockers (boards/dependencies.py)
    "created_at": iso,
    "updated_at": iso,
    "entered_step_at": iso,
    "started_at": iso,
    "label_ids": None,
    "due_at": iso,
    "due_all_day": None,
    "checklist": None,
    "comment_count": None,
    "attachment_count": None,
}
# What a task's card on the board leaves out of its JSON (its column says its step); the
# board shows the rest, whatever fields a task gains.
OFF_BOARD = frozenset({"workflow_id", "step_id", "description", "archived_at", "updated_at"})
CARD_FIELDS = tuple(name for name in TASK_JSON if name not in OFF_BOARD)
_CARD_WRITERS = tuple((name, write) for name, write in TASK_JSON.items() if name in CARD_FIELDS and write)


def task_data(task: Task) -> dict:
    """A task as the API and live messages show it: plain JSON values only."""
    values = {name: getattr(task, name) for name in TASK_JSON}
    return {name: value if (write := TASK_JSON[name]) is None else write(value) for name, value in values.items()}


def card_data(values) -> dict:
    """A card's fields (without its `session` and `waiting`) from the task's `CARD_FIELDS`
    values, as a query reads them; or from its `task_data()`."""
    if isinstance(values, dict):
        return {name: values[name] for name in CARD_FIELDS}
    card = dict(zip(CARD_FIELDS, values, strict=True))
    for name, write in _CARD_WRITERS:
        card[name] = write(card[name])
    return card


def label_data(label: Label) -> dict:
    """A label as the API, the board and live messages show it."""
    return {"id": str(label.pk), "workspace_id": str(label.workspace_id), "name": label.name, "color": label.color}


def change_message(change, writes=()) -> dict:
    """The live message for one committed board change. Each `steps[]`
    entry is the whole step as `GET /api/v1/steps/{id}/` shows it, and each task carries its
    `session` as the board shows it, so viewers never refetch. `writes` go with its first read
    (`common.sql.fetch_together()`), or alone."""
    record, board = change.record, change.board
    message = dict(record.message or {"type": "workflow.updated"})
    tasks = {pk: t for pk, t in record.tasks.items() if pk not in record.deleted}
    wanted = tasks.keys() | (record.session_tasks - record.deleted)
    # A task created in this change has no session but one the change started: creates,
    # the busiest writes, need not look.
    unknown = wanted - (record.created - record.session_tasks)
    if unknown or record.agents:
        sessions = task_sessions(workflow_id=board.workflow.pk, task_ids=wanted, writes=writes)
    else:
        sessions = {}
        sql.fetch_together(*writes)
    if record.agents:  # the queue may have moved: every queued task goes along with its position
        wanted |= {pk for pk, session in sessions.items() if session["queue_position"] is not None}
    unread = wanted - tasks.keys()
    if unread:  # tasks whose session changed while the change wrote nothing else of them
        tasks.update((t.pk, t) for t in Task.objects.filter(pk__in=unread, workflow_id=change.workflow.pk))
    primary = message.pop("task", None)
    if primary is not None:
        message["task"] = (
            {"id": str(primary.pk), "step_id": str(primary.step_id)}
            if primary.pk in record.deleted
            else {**task_data(primary), "session": sessions.get(primary.pk)}
        )
    counts = change.occupancy.counts_of(record.touched)
    about = message.get("group")  # group.updated names the group it is about
    groups = _touched_groups(change, counts, about if isinstance(about, StepGroup) else None)
    if isinstance(about, StepGroup):
        message["group"] = next(g for g in groups if g["id"] == str(about.pk))
    if groups:
        message["groups"] = groups
    _touch_lanes(change, message, tasks.values())
    message.update(
        version=board.version,
        tasks=[{**task_data(t), "session": sessions.get(pk)} for pk, t in tasks.items()],
        deleted_task_ids=[str(pk) for pk in record.deleted],
        steps=[step_data(board.steps[pk], *counts[pk]) for pk in record.touched if pk in board.steps],
    )
    if record.agents:
        message["agents"] = agent_figures(board.workflow)
    if record.orders:
        message["orders"] = {str(pk): keys for pk, keys in record.orders.items()}
    return message


def _touched_groups(change, counts: dict, about: StepGroup | None) -> list[dict]:
    """The groups of the steps this change touched (and the one it is `about`), whole, with
    the occupancy they end with: a viewer's band over the columns follows without a refetch."""
    board = change.board
    groups = {about.pk: about} if about is not None else {}
    for pk in change.record.touched:
        step = board.steps.get(pk)
        group = board.group(step) if step is not None and step.group_id not in groups else None
        if group is not None:
            groups[group.pk] = group
    entries = []
    for group in groups.values():
        steps = board.group_steps(group)
        occupied = sum(counts[s.pk][0] if s.pk in counts else change.occupancy.step(s).occupied for s in steps)
        entries.append((steps[0].position if steps else -1, group_data(group, [s.pk for s in steps], occupied)))
    return [entry for _, entry in sorted(entries, key=lambda e: e[0])]


def _touch_lanes(change, message: dict, tasks) -> None:
    """The lanes (whole, with the occupancy they end with) whose figures the change touched:
    those it names, and on a board of several lanes those of the tasks it carries; and the
    cells with a limit of those lanes in the steps it touched (`lane.updated`: every cell of
    its lane, the lane's whole set). On a board of one lane, its figures are its steps' (the
    message's `steps`): only a change of the lane itself carries it."""
    board, occupancy = change.board, change.occupancy
    about = message.get("lane")  # lane.updated names the lane it is about
    about_id = about.pk if isinstance(about, Lane) else None
    named = change.record.lanes | ({about.pk} if isinstance(about, Lane) else set())
    ids = named | {task.lane_id for task in tasks}
    several = len(board.lanes) > 1
    lanes = [lane for lane in board.lanes.values() if lane.pk in named or (several and lane.pk in ids)]
    if isinstance(about, Lane):
        message["lane"] = lane_data(about, occupancy.lane(about))
    if lanes:
        message["lanes"] = [lane_data(lane, occupancy.lane(lane)) for lane in lanes]
    touched = change.record.touched
    cells = [
        cell_data(cell, occupancy.cell(board.steps[step_id], lane_id))
        for (lane_id, step_id), cell in board.cells.items()
        if step_id in board.steps and (lane_id == about_id or (several and lane_id in ids and step_id in touched))
    ]
    if cells:
        message["cells"] = cells


def lane_data(lane: Lane, occupied: int) -> dict:
    """A lane as the API, the board and live messages show it."""
    return {
        "id": str(lane.pk),
        "workflow_id": str(lane.workflow_id),
        "name": lane.name,
        "position": lane.position,
        "wip_limit": lane.wip_limit,
        "is_expedite": lane.is_expedite,
        "occupied": occupied,
        "over_limit": bool(lane.wip_limit) and occupied > lane.wip_limit,
    }


def cell_data(cell, occupied: int) -> dict:
    """A cell's limit (a lane in one step) and its occupancy."""
    return {
        "lane_id": str(cell.lane_id),
        "step_id": str(cell.step_id),
        "wip_limit": cell.wip_limit,
        "occupied": occupied,
    }


def group_data(group: StepGroup, step_ids: list, occupied: int) -> dict:
    """A step group as the API, the board and live messages show it; `step_ids` in board order."""
    return {
        "id": str(group.pk),
        "workflow_id": str(group.workflow_id),
        "name": group.name,
        "wip_limit": group.wip_limit,
        "step_ids": [str(pk) for pk in step_ids],
        "occupied": occupied,
        "over_limit": occupied > group.wip_limit,
    }


def groups_data(groups, steps: list[WorkflowStep], occupied: dict) -> list[dict]:
    """`groups` of a board whose `steps` (in board order) hold `occupied` {step id: n}, in
    the order of their first steps."""
    members = {group.pk: [s for s in steps if s.group_id == group.pk] for group in groups}
    ordered = sorted(groups, key=lambda g: members[g.pk][0].position if members[g.pk] else -1)
    return [
        group_data(group, [s.pk for s in members[group.pk]], sum(occupied[s.pk] for s in members[group.pk]))
        for group in ordered
    ]


def step_data(step: WorkflowStep, occupied: int, queued: int) -> dict:
    return {
        "id": str(step.pk),
        "workflow_id": str(step.workflow_id),
        "name": step.name,
        "position": step.position,
        "color": step.color,
        "kind": step.kind,
        "is_start_step": step.is_start_step,
        "wip_limit": step.wip_limit,
        "group_id": str(step.group_id) if step.group_id else None,
        "pull_from_step_id": str(step.pull_from_step_id) if step.pull_from_step_id else None,
        "on_full": step.on_full,
        "events": step.events,
        "occupied": occupied,
        "queued": queued,
        "over_limit": step.is_limited and occupied > step.wip_limit,
    }
