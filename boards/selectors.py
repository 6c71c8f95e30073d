"""Reads of the board. Kept out of transactions (SQLite serializes write transactions)."""

from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from boards.messages import cell_data, group_data, lane_data
from boards.models import LIVE, OCCUPYING, QUEUED, Task, TaskEvent
from workflows.models import LaneCell, StepKind, WorkflowStep


def step_counts(step_ids) -> dict:
    """{step_id: (occupied, queued)} for the given steps, in one query."""
    rows = (
        Task.objects.filter(LIVE, step_id__in=list(step_ids))
        .values("step_id")
        .annotate(occupied=Count("id", filter=OCCUPYING), queued=Count("id", filter=QUEUED))
    )
    counts = {step_id: (0, 0) for step_id in step_ids}
    counts.update({row["step_id"]: (row["occupied"], row["queued"]) for row in rows})
    return counts


def group_rows(groups) -> list[dict]:
    """Each of `groups` (StepGroups, in the order given) as the API shows it, with its steps
    in board order and its occupancy, in two queries."""
    groups = list(groups)
    steps = WorkflowStep.objects.filter(group__in=groups).order_by("position").values_list("group_id", "id")
    members = {group.pk: [] for group in groups}
    for group_id, step_id in steps:
        members[group_id].append(step_id)
    counts = step_counts([pk for ids in members.values() for pk in ids])
    return [group_data(group, members[group.pk], sum(counts[pk][0] for pk in members[group.pk])) for group in groups]


def lane_occupancy(lanes) -> dict:
    """{lane id: its live admitted tasks in active steps, what its limit counts} of `lanes`
    (Lanes, or a queryset of them), lanes holding none left out. One query."""
    return dict(
        Task.objects.occupying()
        .filter(lane__in=lanes, step__kind=StepKind.ACTIVE)
        .values("lane_id")
        .annotate(n=Count("id"))
        .values_list("lane_id", "n")
    )


def cell_occupancy(cells) -> dict:
    """{(lane id, step id): the lane's live admitted tasks in the step, what the cell's limit
    counts} of each of `cells` (LaneCells). One query."""
    cells = list(cells)
    if not cells:
        return {}
    rows = (
        Task.objects.occupying()
        .filter(lane__in={cell.lane_id for cell in cells}, step__in={cell.step_id for cell in cells})
        .values("lane_id", "step_id")
        .annotate(n=Count("id"))
        .values_list("lane_id", "step_id", "n")
    )
    counts = {(lane_id, step_id): n for lane_id, step_id, n in rows}
    return {(cell.lane_id, cell.step_id): counts.get((cell.lane_id, cell.step_id), 0) for cell in cells}


def lane_rows(lanes) -> list[dict]:
    """Each of `lanes` (in the order given) as the API shows it, with its occupancy (its live
    admitted tasks in active steps), in one query."""
    lanes = list(lanes)
    occupied = lane_occupancy(lanes)
    return [lane_data(lane, occupied.get(lane.pk, 0)) for lane in lanes]


def cell_rows(lane) -> list[dict]:
    """The lane's cell limits, in board order of their steps, each with the lane's live
    admitted tasks in that step, in two queries."""
    cells = list(LaneCell.objects.filter(lane=lane).order_by("step__position"))
    occupied = cell_occupancy(cells)
    return [cell_data(cell, occupied[(cell.lane_id, cell.step_id)]) for cell in cells]


def with_occupied(memberships):
    """`memberships` annotated with `occupied`: the person's live admitted tasks in active
    steps of every board of the workspace, what their personal limit counts.
    One correlated subquery, so a list of members costs one query."""
    assigned = (
        Task.objects.occupying()
        .filter(
            assignee_id=OuterRef("user_id"),
            workflow__workspace_id=OuterRef("workspace_id"),
            step__kind=StepKind.ACTIVE,
        )
        .order_by()
        .values("assignee_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return memberships.annotate(occupied=Coalesce(Subquery(assigned, output_field=IntegerField()), Value(0)))


def board_events(*, workflow):
    return TaskEvent.objects.filter(workflow=workflow).select_related("actor")
