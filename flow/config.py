"""The configuration history as the flow figures read it (recorded by
workflows/config_history.py): the changes in a window, and what was in force at each
instant of it.

A setting's value at an instant is the `after` of its last change at or before it; before
its first recorded change, that change's `before`; with no change at all, today's value.
"""

from dataclasses import dataclass, field, replace

from django.db.models import Q

from flow.instants import Window, us
from workflows.config_history import cell_subject
from workflows.models import ConfigChange, Lane, LaneCell, LimitScope, Membership, StepGroup


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


def limits_in_window(workflow, window: Window, scope: str, today: dict) -> dict:
    """{subject id: [(microseconds since `from`, limit)]} of one scope: `in_force` with
    `today` and the answer keyed by subject id alone."""
    series = in_force(workflow, window, {(scope, k): v for k, v in today.items()})
    return {k: values for (_, k), values in series.items()}


def in_force(workflow, window: Window, today: dict) -> dict:
    """{(scope, subject id): [(microseconds since `from`, limit)]}: each subject's limit in
    force at `from`, then each change in the window, the last of several at one instant (0:
    no limit; a deleted or not yet created subject counts as unlimited). `today` is {(scope,
    subject id): limit now} of the subjects asked about. One query (none for no subjects):
    the limit changes up to `to` of those subjects only (people change limits by hand, so
    they are few). The ledger, the WIP chart and the limit advice all read limits here."""
    if not today:
        return {}
    keys = {(scope, str(k)): (scope, k) for scope, k in today}
    subjects = Q()
    for scope in {scope for scope, _ in keys}:
        # A person's limit is the workspace's; every other limit is the board's own.
        board = (
            Q(workflow__isnull=True, workspace_id=workflow.workspace_id)
            if scope == LimitScope.PERSON
            else Q(workflow=workflow)
        )
        subjects |= board & Q(scope=scope, subject_id__in=[k for s, k in keys if s == scope])
    rows = (
        ConfigChange.objects.filter(subjects, field="wip_limit")
        .filter(at__lte=window.end)
        .order_by("at", "id")
        .values_list("scope", "subject_id", "at", "before", "after")
    )
    start = us(window.start)
    series = {}
    last_before = {}
    for scope, subject_id, at, before, after in rows:
        key = keys[(scope, subject_id)]
        if at <= window.start:
            last_before[key] = after
            continue
        if key not in series:
            series[key] = {0: last_before.get(key, before)}
        series[key][us(at) - start] = after
    for key, now in today.items():
        if key not in series:
            series[key] = {0: last_before.get(key, now)}
    return {key: [(u, v or 0) for u, v in sorted(values.items())] for key, values in series.items()}


def _cells_today(lanes, steps) -> dict:
    """{(lane id, step id): wip_limit now} of every cell of `lanes` x `steps` (0: no LaneCell,
    no cell limit). One query."""
    limited = {(c.lane_id, c.step_id): c.wip_limit for c in LaneCell.objects.filter(lane__in=lanes)}
    return {(lane.pk, step.pk): limited.get((lane.pk, step.pk), 0) for lane in lanes for step in steps}


def cell_limits(workflow, window: Window, lanes, steps) -> dict:
    """{(lane id, step id): [(microseconds since `from`, wip_limit)]} of every cell of `lanes`
    x `steps`, as `limits_in_window`. Two queries."""
    today = _cells_today(list(lanes), list(steps))
    series = in_force(workflow, window, {(LimitScope.CELL, cell_subject(*cell)): v for cell, v in today.items()})
    cells = {cell_subject(*cell): cell for cell in today}
    return {cells[k]: [(u, v or 0) for u, v in values] for (_, k), values in series.items()}


@dataclass(frozen=True)
class Limit:
    """One limit of a board as the ledger judges it: its scope, id (a cell's is its subject
    in the history, "<lane id>:<step id>"; a person's their user id), name, today's value,
    the steps it counts in, of the tasks in its lane when it has one and of those assigned
    to its person when it has one, and its values in the window."""

    scope: str
    id: str
    name: str
    limit: int
    steps: list
    lane_id: object = None
    person_id: int | None = None
    series: list = field(default_factory=list)


def limits_in_force(workflow, window: Window, steps, active: list) -> list[Limit]:
    """Every step, group, lane, cell and person limit of the board (`steps` in board order;
    `active`: the ids of its active steps, what a lane and a person count) with its values in
    the window, whether limited or not: steps in board order, groups, lanes, each lane's
    cells, then the workspace's members by username. Six queries: the groups and their
    steps, the lanes, the cells, the members, and the history of all of them."""
    steps = list(steps)
    groups = StepGroup.objects.filter(workflow=workflow).prefetch_related("steps").order_by("created_at", "id")
    lanes = list(Lane.objects.filter(workflow=workflow).order_by("position", "created_at", "id"))
    cells = _cells_today(lanes, steps)
    people = (
        Membership.objects.filter(workspace_id=workflow.workspace_id)
        .order_by("user__username", "user_id")
        .values_list("user_id", "user__username", "wip_limit")
    )
    names = {step.pk: step.name for step in steps} | {lane.pk: lane.name for lane in lanes}
    limits = [Limit(LimitScope.STEP, str(s.pk), s.name, s.wip_limit, [s.pk]) for s in steps]
    limits += [
        Limit(LimitScope.GROUP, str(g.pk), g.name, g.wip_limit, [s.pk for s in g.steps.all()])
        for g in groups
        if g.steps.all()  # a group without steps holds nothing
    ]
    limits += [Limit(LimitScope.LANE, str(lane.pk), lane.name, lane.wip_limit, active, lane.pk) for lane in lanes]
    limits += [  # _cells_today's order: lane by lane, each in board order
        Limit(LimitScope.CELL, cell_subject(lane, step), f"{names[lane]} × {names[step]}", v, [step], lane)
        for (lane, step), v in cells.items()
    ]
    limits += [
        Limit(LimitScope.PERSON, str(user_id), username, wip_limit, active, person_id=user_id)
        for user_id, username, wip_limit in people
    ]
    series = in_force(workflow, window, {(limit.scope, limit.id): limit.limit for limit in limits})
    return [replace(limit, series=series[(limit.scope, limit.id)]) for limit in limits]


def limit_at(series: list, u: int) -> int:
    """The value of a `limits_in_window` series at `u` microseconds since `from`."""
    value = series[0][1]
    for start, v in series:
        if start > u:
            break
        value = v
    return value
