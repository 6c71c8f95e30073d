"""Recording the configuration history (ConfigChange): what a board's limits and flow
rules were, and who changed them when.

A change snapshots the configuration before it writes and records the difference after,
in its own transaction (boards/structure.py for a board's steps, groups and settings;
teams/services.py for a person's limit): a change that is refused or rolled back records
nothing. One row per setting that changed.
"""

from django.utils import timezone

from workflows.models import ConfigChange, LimitScope, StepGroup, Workflow

# The settings whose history the flow figures need, per scope.
STEP_FIELDS = ("wip_limit", "on_full", "kind", "pull_from_step_id")
GROUP_FIELDS = ("wip_limit", "step_ids")
PERSON_FIELDS = ("wip_limit",)
BOARD_FIELDS = ("expedite_limit",)
LANE_FIELDS = ("wip_limit", "is_expedite")
CELL_FIELDS = ("wip_limit",)


def cell_subject(lane_id, step_id) -> str:
    """A cell's subject id in the history: "<lane id>:<step id>"."""
    return f"{lane_id}:{step_id}"


def _value(value):
    return str(value) if value is not None and not isinstance(value, int | str) else value


def board_config(workflow: Workflow, steps, lanes=(), cells=None) -> dict:
    """{(scope, subject id): (name, {field: value})} of a board's steps, groups, lanes, cells
    and settings; `steps`, `lanes` and `cells` ({(lane id, step id): LaneCell}) as the change
    holds them."""
    steps = list(steps)
    config = {(LimitScope.BOARD, str(workflow.pk)): (workflow.name, {"expedite_limit": workflow.expedite_limit})}
    for step in steps:
        values = {name: _value(getattr(step, name)) for name in STEP_FIELDS}
        config[(LimitScope.STEP, str(step.pk))] = (step.name, values)
    for pk, name, wip_limit in StepGroup.objects.filter(workflow=workflow).values_list("pk", "name", "wip_limit"):
        members = sorted(str(s.pk) for s in steps if s.group_id == pk)
        config[(LimitScope.GROUP, str(pk))] = (name, {"wip_limit": wip_limit, "step_ids": members})
    lane_names, step_names = {}, {step.pk: step.name for step in steps}
    for lane in lanes:
        lane_names[lane.pk] = lane.name
        config[(LimitScope.LANE, str(lane.pk))] = (lane.name, {name: getattr(lane, name) for name in LANE_FIELDS})
    for (lane_id, step_id), cell in (cells or {}).items():
        name = f"{lane_names.get(lane_id, '?')} × {step_names.get(step_id, '?')}"
        config[(LimitScope.CELL, cell_subject(lane_id, step_id))] = (name, {"wip_limit": cell.wip_limit})
    return config


def record(*, workspace_id, workflow_id, actor, before: dict, after: dict) -> list[ConfigChange]:
    """Record every setting that differs between two snapshots (`board_config`'s shape): a
    subject only after was created (before is null), one only before was deleted."""
    at = timezone.now()
    actor = actor if getattr(actor, "is_authenticated", False) else None
    rows = []
    for key in sorted(before.keys() | after.keys()):
        scope, subject_id = key
        old_name, old = before.get(key, (None, {}))
        new_name, new = after.get(key, (None, {}))
        for field in sorted(old.keys() | new.keys()):
            if key in before and key in after and old[field] == new[field]:
                continue
            rows.append(
                ConfigChange(
                    workspace_id=workspace_id,
                    workflow_id=workflow_id,
                    scope=scope,
                    subject_id=subject_id,
                    name=new_name or old_name,
                    field=field,
                    before=old.get(field),
                    after=new.get(field),
                    actor=actor,
                    at=at,
                )
            )
    return ConfigChange.objects.bulk_create(rows)


def person_config(membership) -> dict:
    return {
        (LimitScope.PERSON, str(membership.user_id)): (
            membership.user.get_username(),
            {name: getattr(membership, name) for name in PERSON_FIELDS},
        )
    }
