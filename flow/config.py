"""The configuration history as the flow figures read it (recorded by
workflows/config_history.py): the changes in a window, and what was in force at each
instant of it.

A setting's value at an instant is the `after` of its last change at or before it; before
its first recorded change, that change's `before`; with no change at all, today's value.
"""

from django.db.models import Q

from flow.instants import Window, us
from workflows.models import ConfigChange, LimitScope


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
    """{subject id: [(microseconds since `from`, limit)]}: each subject's limit in force at
    `from`, then each change in the window, the last of several at one instant (0: no
    limit; a deleted or not yet created subject counts as unlimited). `today` is {subject
    id: limit now} of the subjects asked about. One query (none for no subjects): the limit changes up to `to` of
    those subjects only (people change limits by hand, so they are few). The ledger, the
    WIP chart and the limit advice all read the limits through here."""
    if not today:
        return {}
    keys = {str(k): k for k in today}
    # A person's limit is the workspace's; every other limit is the board's own.
    where = (
        Q(workflow__isnull=True, workspace_id=workflow.workspace_id)
        if scope == LimitScope.PERSON
        else Q(workflow=workflow)
    )
    rows = (
        ConfigChange.objects.filter(where, scope=scope, field="wip_limit", subject_id__in=list(keys))
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
            series[key] = {0: last_before.get(key, before)}
        series[key][us(at) - start] = after
    for key, now in today.items():
        if key not in series:
            series[key] = {0: last_before.get(key, now)}
    return {key: [(u, v or 0) for u, v in sorted(values.items())] for key, values in series.items()}


def limit_at(series: list, u: int) -> int:
    """The value of a `limits_in_window` series at `u` microseconds since `from`."""
    value = series[0][1]
    for start, v in series:
        if start > u:
            break
        value = v
    return value
