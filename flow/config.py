"""The configuration history as the flow figures read it (recorded by
workflows/config_history.py): the changes in a window, and what was in force at each
instant of it.

A setting's value at an instant is the `after` of its last change at or before it; before
its first recorded change, that change's `before`; with no change at all, today's value.
"""

from django.db.models import Q

from flow.instants import Window, us
from workflows.config_history import cell_subject
from workflows.models import ConfigChange, LaneCell, LimitScope


def changes(workflow, window: Window):
    """The board's changes in the window, its workspace's personal limits included, oldest
    first."""
    return (
        ConfigChange.objects.filter(
            Q(workflow=workflow) | Q(workflow__isnull=True, workspace_id=workflow.workspace_id),
            at__gte=window.start,
            at__lte=window.end,
        )
        .select_related("actor")
        .order_by("at", "id")
    )


def in_force(workflow, window: Window, scope: str, field: str, today: dict) -> dict:
    """{subject id: [(microseconds since `from`, value)]}: each subject's value at `from`,
    then each change in the window. `today` is {subject id: value now} of the subjects
    asked about. Two queries: the changes up to `to` of those subjects only (people change
    limits by hand, so they are few)."""
    keys = {str(k): k for k in today}
    rows = (
        ConfigChange.objects.filter(workflow=workflow, scope=scope, field=field, subject_id__in=list(keys))
        .filter(at__lte=window.end)
        .order_by("at", "id")
        .values_list("subject_id", "at", "before", "after")
    )
    start = us(window.start)
    series = {}
    last_before = {}
    for subject_id, at, before, after in rows:
        key = keys[subject_id]
        if at <= window.start:
            last_before[key] = after
            continue
        if key not in series:
            series[key] = [(0, last_before.get(key, before))]
        series[key].append((us(at) - start, after))
    for key, now in today.items():
        if key not in series:
            series[key] = [(0, last_before.get(key, now))]
    return series


def step_limits(workflow, window: Window, steps) -> dict:
    """{step id: [(microseconds since `from`, wip_limit)]}: a deleted or not yet created
    step counts as unlimited."""
    series = in_force(workflow, window, LimitScope.STEP, "wip_limit", {s.pk: s.wip_limit for s in steps})
    return {k: [(u, v or 0) for u, v in values] for k, values in series.items()}


def lane_limits(workflow, window: Window, lanes) -> dict:
    """{lane id: [(microseconds since `from`, wip_limit)]}, as `step_limits`."""
    series = in_force(workflow, window, LimitScope.LANE, "wip_limit", {lane.pk: lane.wip_limit for lane in lanes})
    return {k: [(u, v or 0) for u, v in values] for k, values in series.items()}


def cell_limits(workflow, window: Window, lanes, steps) -> dict:
    """{(lane id, step id): [(microseconds since `from`, wip_limit)]} of every cell of `lanes`
    x `steps`: a cell without a limit (no LaneCell) counts as unlimited. Two queries."""
    lanes, steps = list(lanes), list(steps)
    limited = {(c.lane_id, c.step_id): c.wip_limit for c in LaneCell.objects.filter(lane__in=lanes)}
    cells = {cell_subject(lane.pk, step.pk): (lane.pk, step.pk) for lane in lanes for step in steps}
    today = {subject: limited.get(cell, 0) for subject, cell in cells.items()}
    series = in_force(workflow, window, LimitScope.CELL, "wip_limit", today)
    return {cells[k]: [(u, v or 0) for u, v in values] for k, values in series.items()}


def limit_at(series: list, u: int) -> int:
    """The value of a `step_limits` series at `u` microseconds since `from`."""
    value = series[0][1]
    for start, v in series:
        if start > u:
            break
        value = v
    return value
