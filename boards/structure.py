"""Changes to a board's structure: its settings, its steps, step groups and lanes, and deleting
boards. They are board changes: they take the board's locks, bump its version, may open
capacity (so they pull), and broadcast. Deleting a board deletes its tasks first."""

from contextlib import contextmanager

from django.db import transaction
from django.db.models import F

from boards.admission import bulk_move, move
from boards.change import BoardChange
from boards.changes import board_change
from boards.locking import NotFound, board_transaction
from boards.models import Task
from common.errors import Conflict, Invalid
from workflows import config_history
from workflows.models import Lane, LaneCell, OnFull, StepGroup, StepKind, Workflow, WorkflowStep, Workspace
from workflows.signals import session_limits_changed_on_commit
from workflows.step_rules import (
    MAX_LANES,
    MIN_GROUP_STEPS,
    check_step_count,
    feeder_errors,
    group_errors,
    normalized_events,
    step_errors,
    without_moves_to,
)


@contextmanager
def structure_change(workflow_id, *, actor):
    """A board change to the board's configuration: what changed in its limits and flow
    rules is recorded in the configuration history, in the change's transaction."""
    with board_change(workflow_id, actor=actor) as change:
        before = _config(change)
        yield change
        config_history.record(
            workspace_id=change.workflow.workspace_id,
            workflow_id=change.workflow.pk,
            actor=actor,
            before=before,
            after=_config(change),
        )


def _config(change) -> dict:
    board = change.board
    return config_history.board_config(change.workflow, change.steps.values(), board.lanes.values(), board.cells)


@transaction.atomic
def workflow_delete(*, workflow: Workflow) -> None:
    _delete_boards(Workflow.objects.filter(pk=workflow.pk))


@transaction.atomic
def workspace_delete(*, workspace: Workspace) -> None:
    _delete_boards(Workflow.objects.filter(workspace=workspace))
    workspace.delete()


def _delete_boards(workflows) -> None:
    """Tasks first: a task's step is PROTECTed, and the cascade from a workflow can reach its
    steps before its tasks. The board locks keep a concurrent admission from slipping in."""
    ids = list(workflows.select_for_update().order_by("pk").values_list("pk", flat=True))
    Task.objects.filter(workflow_id__in=ids).delete()
    Workflow.objects.filter(pk__in=ids).delete()


@board_transaction
def workflow_update(*, workflow: Workflow, actor, **fields) -> Workflow:
    """A board's settings. A new `expedite_limit` admits nothing by itself (a pull never
    expedites), so nothing fills; the change is still one version step and one message."""
    with structure_change(workflow.pk, actor=actor) as change:
        locked = change.workflow
        limits = ("max_parallel_sessions", "on_session_limit")
        limits_changed = any(fields.get(name, getattr(locked, name)) != getattr(locked, name) for name in limits)
        for name, value in fields.items():
            setattr(locked, name, value)
        locked.save(update_fields=list(fields))
        change.record.touch()
        change.record.announce(
            "workflow.updated",
            workflow={"id": str(locked.pk), "name": locked.name, "expedite_limit": locked.expedite_limit},
        )
        if limits_changed:
            change.record.agents_changed()
            session_limits_changed_on_commit(workspace_id=locked.workspace_id, workflow_id=locked.pk)
        return locked


def _feeders(change: BoardChange) -> dict:
    return {pk: s.pull_from_step_id for pk, s in change.steps.items()}


def _check_step(change: BoardChange, step_id, *, pull_from_step_id, **fields) -> None:
    """The step's rules (workflows.step_rules) against its board, under the board's lock."""
    errors = step_errors(fields, step_ids={str(pk) for pk in change.steps} | {str(step_id)})
    feeders = _feeders(change)
    feeders[step_id] = pull_from_step_id
    problems = feeder_errors(step_id, pull_from_step_id, feeders)
    if problems:
        errors["pull_from_step_id"] = problems
    if errors:
        raise Invalid(errors)


def _place_step(change: BoardChange, step: WorkflowStep, position: int) -> None:
    """Insert `step` at `position`, renumbering the board's steps 0..n-1 (two phases: unique)."""
    others = sorted((s for s in change.steps.values() if s.pk != step.pk), key=lambda s: s.position)
    position = max(0, min(position, len(others)))
    _renumber_steps(change, others[:position] + [step] + others[position:])


def _renumber_steps(change: BoardChange, ordered: list[WorkflowStep]) -> None:
    # Park every row far away first: positions are unique and checked row by row.
    WorkflowStep.objects.filter(pk__in=[s.pk for s in ordered]).update(position=F("position") + 100_000)
    for i, s in enumerate(ordered):
        s.position = i
    WorkflowStep.objects.bulk_update(ordered, ["position"])
    change.record.touch(*ordered)


def _set_start_step(change: BoardChange, step: WorkflowStep) -> None:
    previous = [s for s in change.steps.values() if s.is_start_step and s.pk != step.pk]
    for s in previous:
        s.is_start_step = False
    WorkflowStep.objects.filter(pk__in=[s.pk for s in previous]).update(is_start_step=False)
    change.record.touch(*previous)


@board_transaction
def step_create(
    *,
    workflow: Workflow,
    actor,
    name: str,
    position: int | None = None,
    color: str = "#64748b",
    kind: str = StepKind.ACTIVE,
    is_start_step: bool = False,
    wip_limit: int = 0,
    pull_from_step_id=None,
    on_full: str = OnFull.REJECT,
    events: dict | None = None,
) -> WorkflowStep:
    with structure_change(workflow.pk, actor=actor) as change:
        check_step_count(len(change.steps) + 1, "workflow_id")
        step = WorkflowStep(
            workflow=change.workflow,
            name=name,
            color=color,
            kind=kind,
            wip_limit=wip_limit,
            pull_from_step_id=pull_from_step_id,
            on_full=on_full,
            events=normalized_events(events),
            position=len(change.steps) + 200_000,
        )
        _check_step(
            change,
            step.pk,
            wip_limit=wip_limit,
            pull_from_step_id=pull_from_step_id,
            events=step.events,
            on_full=on_full,
            kind=kind,
        )
        step.is_start_step = is_start_step or not change.steps
        if step.is_start_step:
            _set_start_step(change, step)
        step.save(force_insert=True)
        change.steps[step.pk] = step
        _place_step(change, step, len(change.steps) if position is None else position)
        change.record.announce("step.updated", step_id=str(step.pk))
        change.worklist.opened(step)
        return step


@board_transaction
def step_update(*, step: WorkflowStep, actor, **fields) -> WorkflowStep:
    with structure_change(step.workflow_id, actor=actor) as change:
        step = change.board.step(step.pk)
        merged = {
            "wip_limit": step.wip_limit,
            "pull_from_step_id": step.pull_from_step_id,
            "events": step.events,
            "on_full": step.on_full,
            "kind": step.kind,
        }
        if "events" in fields:
            fields["events"] = normalized_events(fields["events"])
        merged.update({k: v for k, v in fields.items() if k in merged})
        _check_step(change, step.pk, **merged)
        position = fields.pop("position", None)
        # Checked before the fields are applied, while `step.is_start_step` is still the old value.
        if fields.get("is_start_step") is False and step.is_start_step:
            raise Invalid({"is_start_step": ["Choose another start step instead of unsetting this one."]})
        was_done = step.kind == StepKind.DONE
        for name, value in fields.items():
            setattr(step, name, value)
        if was_done != (step.kind == StepKind.DONE):
            # Its tasks are finished now, or no longer: their dependents follow.
            live = Task.objects.filter(step=step, archived_at__isnull=True)
            change.record.finishing.update(live.values_list("pk", flat=True))
        if fields.get("is_start_step"):
            _set_start_step(change, step)
        step.save(update_fields=list(fields) or None)
        if position is not None and position != step.position:
            _place_step(change, step, position)
        change.record.touch(step)
        change.record.announce("step.updated", step_id=str(step.pk))
        # A raised limit, a new feeder or a switch to unlimited can open capacity.
        change.worklist.opened(step)
        return step


@board_transaction
def step_delete(*, step: WorkflowStep, actor, move_tasks_to: WorkflowStep | None = None) -> None:
    with structure_change(step.workflow_id, actor=actor) as change:
        step = change.board.step(step.pk)
        target = None
        if move_tasks_to is not None:
            target = change.steps.get(move_tasks_to.pk)
            if target is None or target.pk == step.pk:
                raise Invalid({"move_tasks_to": ["Must be another step of the same workflow."]})
        live = list(Task.objects.select_for_update().filter(step=step, archived_at__isnull=True).in_board_order())
        if live and target is None:
            raise Conflict(
                f'Step "{step.name}" still holds {len(live)} task(s); name a step to move them to.',
                code="step_not_empty",
                live_tasks=len(live),
            )
        remaining = sorted((s for s in change.steps.values() if s.pk != step.pk), key=lambda s: s.position)
        archived = Task.objects.filter(step=step, archived_at__isnull=False)
        if not remaining:
            if archived.exists():
                raise Conflict(
                    "The last step of a workflow cannot be deleted while it has tasks.", code="step_not_empty"
                )
        # A step on its way out neither pulls nor promotes.
        step.wip_limit, step.pull_from_step_id = 0, None
        dissolved = _leave_group(change, step)
        # Named first: the first announcement wins, and viewers must learn the column is gone
        # (not just that its tasks moved), and a group gone with it.
        change.record.announce("step.deleted", step_id=str(step.pk), **dissolved)
        if live:
            bulk_move(change, live, target)
        # Archived tasks follow the live ones, or go to the start step, so they can be restored.
        if remaining:
            archived.update(step=target or next((s for s in remaining if s.is_start_step), remaining[0]))
        fed = [s for s in remaining if s.pull_from_step_id == step.pk]
        for s in fed:
            s.pull_from_step = None
        WorkflowStep.objects.filter(pk__in=[s.pk for s in fed]).update(pull_from_step=None)
        # Like feeders, move_to_step actions aimed at the deleted step go with it.
        for s in remaining:
            events = without_moves_to(s.events, step.pk)
            if events != s.events:
                s.events = events
                s.save(update_fields=["events"])
                change.record.touch(s)
        del change.steps[step.pk]
        step.delete()
        _renumber_steps(change, remaining)
        if remaining and step.is_start_step:
            remaining[0].is_start_step = True
            WorkflowStep.objects.filter(pk=remaining[0].pk).update(is_start_step=True)
        change.record.touched.discard(step.pk)


def _leave_group(change: BoardChange, step: WorkflowStep) -> dict:
    """A step being deleted leaves its group; a group left with fewer than 2 steps is
    dissolved, its last step freed. Returns the live message's part."""
    if step.group_id is None:
        return {}
    others = [s for s in change.steps.values() if s.group_id == step.group_id and s.pk != step.pk]
    change.record.touch(*others)  # the group's step_ids change
    if len(others) >= MIN_GROUP_STEPS:
        return {}
    group_id = step.group_id
    _set_group_steps(change, group_id, [])  # the deleted step too: nothing is left of the group
    StepGroup.objects.filter(pk=group_id).delete()
    return {"deleted_group_ids": [str(group_id)]}


def _check_group(change: BoardChange, group_id, **values) -> None:
    """A group's rules (workflows.step_rules) against its board, under the board's lock."""
    others = {pk: s.group_id for pk, s in change.steps.items() if s.group_id not in (None, group_id)}
    wanted = [pk for pk in values.get("step_ids", []) if pk in others]
    # Named from the database, not the change's cache of groups: it must not hold a group as it was.
    names = dict(StepGroup.objects.filter(pk__in={others[pk] for pk in wanted}).values_list("pk", "name"))
    errors = group_errors(
        values,
        steps={pk: s.name for pk, s in change.steps.items()},
        taken={pk: names[others[pk]] for pk in wanted},
    )
    if errors:
        raise Invalid(errors)


def _set_group_steps(change: BoardChange, group_id, step_ids) -> None:
    """Make `step_ids` the steps of the group; its other steps leave it. Every step concerned
    is touched (the live message carries it) and may fill: a grouped step pulls, and a freed
    one is no longer held by the group's limit."""
    wanted = set(step_ids)
    concerned = [s for s in change.steps.values() if s.group_id == group_id or s.pk in wanted]
    for s in concerned:
        s.group_id = group_id if s.pk in wanted else None
    WorkflowStep.objects.filter(pk__in=wanted).update(group_id=group_id)
    WorkflowStep.objects.filter(pk__in=[s.pk for s in concerned if s.pk not in wanted]).update(group_id=None)
    change.record.touch(*concerned)
    change.worklist.opened(*concerned)


def _locked_group(change: BoardChange, group_id) -> StepGroup:
    """The group as it is under the board's lock (which orders every change to it)."""
    group = StepGroup.objects.filter(pk=group_id, workflow=change.workflow).first()
    if group is None:
        raise NotFound("Not found.")
    return group


@board_transaction
def group_create(*, workflow: Workflow, actor, name: str, wip_limit: int, step_ids: list) -> StepGroup:
    with structure_change(workflow.pk, actor=actor) as change:
        _check_group(change, None, name=name, wip_limit=wip_limit, step_ids=step_ids)
        group = StepGroup.objects.create(workflow=change.workflow, name=name, wip_limit=wip_limit)
        _set_group_steps(change, group.pk, step_ids)
        change.record.announce("group.updated", group=group)
        return group


@board_transaction
def group_update(*, group: StepGroup, actor, **fields) -> StepGroup:
    """Rename a group, change its limit or its steps. A raised limit, a step joining (it now
    pulls) or a step leaving (no longer held by the group) fills at once."""
    with structure_change(group.workflow_id, actor=actor) as change:
        group = _locked_group(change, group.pk)
        _check_group(change, group.pk, **fields)
        step_ids = fields.pop("step_ids", None)
        for name, value in fields.items():
            setattr(group, name, value)
        group.save(update_fields=list(fields) or None)
        if step_ids is None:
            step_ids = [s.pk for s in change.board.group_steps(group)]
        _set_group_steps(change, group.pk, step_ids)
        change.record.announce("group.updated", group=group)
        return group


@board_transaction
def group_delete(*, group: StepGroup, actor) -> None:
    """Delete a group: its steps are free of its limit, and may fill."""
    with structure_change(group.workflow_id, actor=actor) as change:
        group = _locked_group(change, group.pk)
        change.record.announce(
            "group.deleted", group={"id": str(group.pk), "name": group.name}, deleted_group_ids=[str(group.pk)]
        )
        _set_group_steps(change, group.pk, [])
        group.delete()


# --- lanes --------------------------------------------------------------------------------


def _locked_lane(change: BoardChange, lane_id) -> Lane:
    """The lane as it is under the board's lock (which orders every change to it)."""
    lane = change.board.lanes.get(lane_id)
    if lane is None:
        raise NotFound("Not found.")
    return lane


def _check_expedite_lane(change: BoardChange, lane: Lane, is_expedite: bool) -> None:
    """At most one expedite lane per board; a lane becomes it, or stops being it, only while
    it holds no live task (its tasks' class of service follows the lane they entered)."""
    if is_expedite == lane.is_expedite:
        return
    if is_expedite and any(other.is_expedite for other in change.board.lanes.values() if other.pk != lane.pk):
        raise Invalid({"is_expedite": ["This board already has an expedite lane."]})
    if lane.pk in change.board.lanes and Task.objects.live().filter(lane=lane).exists():
        raise Conflict(
            f'Lane "{lane.name}" holds tasks; move them out before it becomes or stops being the expedite lane.',
            code="lane_not_empty",
        )


def _place_lane(change: BoardChange, lane: Lane, position: int | None) -> None:
    """Put `lane` at `position` (None: where it is, or last when new), renumbering the
    board's lanes 0..n-1; the expedite lane is always first."""
    others = [other for other in change.board.lanes.values() if other.pk != lane.pk]
    if position is None:
        position = lane.position if lane.pk in change.board.lanes else len(others)
    ordered = others[:position] + [lane] + others[position:]
    ordered.sort(key=lambda item: not item.is_expedite)  # stable: the rest keep their order
    moved = []
    for i, item in enumerate(ordered):
        if item.position != i:
            item.position = i
            moved.append(item)
    Lane.objects.bulk_update([item for item in moved if item is not lane], ["position"])
    change.board._lanes = {item.pk: item for item in ordered}
    change.record.lanes_touched(*moved)


def _lane_room_may_open(change: BoardChange) -> None:
    """A lane or cell limit rose or went: every step that fills may now take its work."""
    change.worklist.opened(*(s for s in change.steps.values() if change.board.limited(s) or s.on_full == OnFull.QUEUE))


@board_transaction
def lane_create(
    *, workflow: Workflow, actor, name: str, position: int | None = None, wip_limit: int = 0, is_expedite: bool = False
) -> Lane:
    with structure_change(workflow.pk, actor=actor) as change:
        if len(change.board.lanes) >= MAX_LANES:
            raise Invalid({"workflow_id": [f"A workflow holds at most {MAX_LANES} lanes."]})
        lane = Lane(workflow=change.workflow, name=name, wip_limit=wip_limit, is_expedite=False, position=0)
        _check_expedite_lane(change, lane, is_expedite)
        lane.is_expedite = is_expedite
        _place_lane(change, lane, position)
        lane.save(force_insert=True)
        change.record.announce("lane.updated", lane=lane)
        change.record.lanes_touched(lane)
        return lane


@board_transaction
def lane_update(*, lane: Lane, actor, **fields) -> Lane:
    """Rename a lane, move it, change its limit or make it the expedite lane. A raised or
    removed limit fills the board at once."""
    with structure_change(lane.workflow_id, actor=actor) as change:
        lane = _locked_lane(change, lane.pk)
        if "is_expedite" in fields:
            _check_expedite_lane(change, lane, fields["is_expedite"])
        position = fields.pop("position", None)
        for name, value in fields.items():
            setattr(lane, name, value)
        if position is not None or "is_expedite" in fields:
            _place_lane(change, lane, position)
        lane.save()
        if "wip_limit" in fields:
            _lane_room_may_open(change)
        change.record.announce("lane.updated", lane=lane)
        change.record.lanes_touched(lane)
        return lane


@board_transaction
def lane_delete(*, lane: Lane, actor, move_tasks_to=None) -> None:
    """Delete a lane. Its live tasks move to the lane `move_tasks_to` (a lane id) in their
    steps, each admitted like any move (all or nothing); its archived ones go along. A
    board keeps at least one lane."""
    with structure_change(lane.workflow_id, actor=actor) as change:
        lane = _locked_lane(change, lane.pk)
        if len(change.board.lanes) == 1:
            raise Invalid({"lane": ["A board keeps at least one lane."]})
        target = None
        if move_tasks_to is not None:
            target = change.board.lanes.get(move_tasks_to)
            if target is None or target.pk == lane.pk:
                raise Invalid({"move_tasks_to": ["Must be another lane of the same workflow."]})
        live = list(Task.objects.select_for_update().filter(lane=lane, archived_at__isnull=True).order_by("pk"))
        if live and target is None:
            raise Conflict(
                f'Lane "{lane.name}" still holds {len(live)} task(s); name a lane to move them to.',
                code="lane_not_empty",
                live_tasks=len(live),
            )
        # Named first: the first announcement wins, and viewers must learn the row is gone.
        change.record.announce(
            "lane.deleted", lane={"id": str(lane.pk), "name": lane.name}, deleted_lane_ids=[str(lane.pk)]
        )
        change.record.touch()  # also when no task moves and no lane is renumbered
        for task in live:
            move(change, task, change.steps[task.step_id], lane_id=target.pk)
        remaining = [other for other in change.board.lanes.values() if other.pk != lane.pk]
        Task.objects.filter(lane=lane).update(lane=target or remaining[0])  # the archived ones
        change.board._cells = {key: cell for key, cell in change.board.cells.items() if key[0] != lane.pk}
        del change.board._lanes[lane.pk]
        lane.delete()
        for i, other in enumerate(remaining):
            if other.position != i:
                other.position = i
                other.save(update_fields=["position"])
                change.record.lanes_touched(other)
        _lane_room_may_open(change)


@board_transaction
def cells_set(*, lane: Lane, actor, cells: list[dict]) -> None:
    """Make `cells` ([{"step_id", "wip_limit"}], 0: none) the lane's cell limits; steps left
    out have none. A limit raised or removed fills the board at once."""
    with structure_change(lane.workflow_id, actor=actor) as change:
        lane = _locked_lane(change, lane.pk)
        errors = {}
        seen = set()
        for i, cell in enumerate(cells):
            if cell["step_id"] not in change.steps:
                errors[f"cells[{i}].step_id"] = ["No such step in this workflow."]
            elif cell["step_id"] in seen:
                errors[f"cells[{i}].step_id"] = ["Each step at most once."]
            seen.add(cell["step_id"])
        if errors:
            raise Invalid(errors)
        LaneCell.objects.filter(lane=lane).delete()
        made = LaneCell.objects.bulk_create(
            [
                LaneCell(lane=lane, step_id=cell["step_id"], wip_limit=cell["wip_limit"])
                for cell in cells
                if cell["wip_limit"]
            ]
        )
        before = [step_id for lane_id, step_id in change.board.cells if lane_id == lane.pk]
        change.board._cells = {key: cell for key, cell in change.board.cells.items() if key[0] != lane.pk}
        change.board._cells.update({(lane.pk, cell.step_id): cell for cell in made})
        change.record.touch(*(change.steps[pk] for pk in {*before, *(cell.step_id for cell in made)}))
        _lane_room_may_open(change)
        change.record.announce("lane.updated", lane=lane)
        change.record.lanes_touched(lane)
