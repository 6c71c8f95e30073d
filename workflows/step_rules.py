"""Every rule a step's configuration obeys, and a step group's, in one
place: the REST and MCP serializers declare their fields from these bounds, the services
check a step or a group against its board here (under the board's lock), and the portable
import (and templates) check each step and group document here. Violations are 400 with
field errors."""

import re
import unicodedata
from collections.abc import Hashable

from common.errors import Invalid
from workflows.models import OnFull, StepKind

MAX_STEPS = 50  # per workflow
MAX_LANES = 50  # per workflow
MAX_ACTIONS = 10  # per event list
MAX_WIP_LIMIT = 100_000
MAX_NAME = 200
MAX_POSITION = 10_000
MIN_GROUP_STEPS = 2  # a group of one step would be a second limit on it
COLOR = re.compile(r"#[0-9a-fA-F]{3,8}|[a-z]{3,20}")
DEFAULT_COLOR = "#64748b"

MOVES = {"move_to_next", "move_to_previous", "move_to_step"}
ACTION_TYPES = {
    "on_enter": {"auto_start_agent", *MOVES},
    "on_turn_complete": MOVES,
    "on_exit": {"auto_start_agent", *MOVES},
}
# The keys an action and its config may hold: anything else would be stored and served
# on every board read for nothing.
ACTION_KEYS = {"type", "config"}
CONFIG_KEYS = {
    "auto_start_agent": set(),
    "move_to_next": set(),
    "move_to_previous": set(),
    "move_to_step": {"step_id"},
}


def feeder_errors(step_id, feeder_id, feeders: dict) -> list[str]:
    """Errors for setting `step_id`'s feeder to `feeder_id`, given {step: feeder} of the workflow."""
    if feeder_id is None:
        return []
    if feeder_id not in feeders:
        return ["Must be a step of the same workflow."]
    if feeder_id == step_id:
        return ["A step cannot pull from itself."]
    seen, current = {step_id}, feeder_id
    while current is not None:
        if current in seen:
            return ["This feeder would form a cycle of pulls."]
        seen.add(current)
        current = feeders.get(current)
    return []


def _action_errors(key: str, action, step_ids: set) -> list[str]:
    kind = action.get("type") if isinstance(action, dict) else None
    if not isinstance(kind, str) or kind not in ACTION_TYPES[key]:
        return [f'{key}: unknown action "{str(kind)[:40]}".']
    if set(action) - ACTION_KEYS:
        return [f"{key}: an action holds only type and config."]
    config = action.get("config", {})
    if not isinstance(config, dict) or set(config) - CONFIG_KEYS[kind]:
        allowed = ", ".join(sorted(CONFIG_KEYS[kind])) or "nothing"
        return [f"{key}: {kind} takes a config of {allowed}."]
    target = config.get("step_id")
    if kind == "move_to_step" and not (isinstance(target, str) and target in step_ids):
        return [f"{key}: move_to_step needs config.step_id, a step of this workflow."]
    return []


def events_errors(events, step_ids: set) -> list[str]:
    """Errors of `{"on_enter": [...], ...}`; `move_to_step` targets must be in `step_ids` (str)."""
    if not isinstance(events, dict):
        return ["Must be an object with on_enter, on_turn_complete and on_exit lists."]
    errors = []
    for key, actions in events.items():
        if key not in ACTION_TYPES:
            errors.append(f'Unknown event "{str(key)[:40]}".')
        elif not isinstance(actions, list):
            errors.append(f"{key} must be a list of actions.")
        elif len(actions) > MAX_ACTIONS:  # refused before looking at any of them
            errors.append(f"{key} holds at most {MAX_ACTIONS} actions.")
        else:
            errors += [e for action in actions for e in _action_errors(key, action, step_ids)]
    return errors


def name_errors(name) -> list[str]:
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_NAME
        or any(unicodedata.category(ch) == "Cc" for ch in name)
    ):
        return [f"A name of 1 to {MAX_NAME} characters is required."]
    return []


def step_errors(values: dict, *, step_ids: set) -> dict[str, list[str]]:
    """Errors by field for the step fields present in `values`."""
    checks = {
        "name": name_errors,
        "wip_limit": lambda v: (
            [] if _whole(v, MAX_WIP_LIMIT) else [f"Must be a whole number from 0 to {MAX_WIP_LIMIT}."]
        ),
        "on_full": lambda v: [] if v in OnFull.values else ['Must be "reject" or "queue".'],
        "kind": lambda v: [] if v in StepKind.values else ['Must be "backlog", "active" or "done".'],
        "is_start_step": lambda v: [] if isinstance(v, bool) else ["Must be true or false."],
        "color": lambda v: (
            [] if isinstance(v, str) and COLOR.fullmatch(v) else ['Must be "#rgb", "#rrggbb" or a colour name.']
        ),
        "events": lambda v: events_errors(v, step_ids),
    }
    errors = {field: check(values[field]) for field, check in checks.items() if field in values}
    return {field: messages for field, messages in errors.items() if messages}


def group_errors(values: dict, *, steps: dict, taken: dict, steps_field: str = "step_ids") -> dict[str, list[str]]:
    """Errors by field for the group fields present in `values`. Its steps are keys of
    `steps` ({key: step name} of the workflow; a key is a step id, or a position in a
    document), under `steps_field`; `taken` is {key: group name} for steps in another group."""
    checks = {
        "name": name_errors,
        "wip_limit": lambda v: (
            [] if _whole(v, MAX_WIP_LIMIT) and v >= 1 else [f"Must be a whole number from 1 to {MAX_WIP_LIMIT}."]
        ),
        steps_field: lambda v: _group_steps_errors(v, steps, taken),
    }
    errors = {field: check(values[field]) for field, check in checks.items() if field in values}
    return {field: messages for field, messages in errors.items() if messages}


def _group_steps_errors(members, steps: dict, taken: dict) -> list[str]:
    if not isinstance(members, list) or not all(isinstance(key, Hashable) for key in members):
        return ["Must be a list of steps."]
    if len(members) != len(set(members)):
        return ["Each step is named once."]
    if len(members) < MIN_GROUP_STEPS:
        return [f"A group holds at least {MIN_GROUP_STEPS} steps."]
    if any(key not in steps for key in members):
        return ["Every step must be a step of this workflow."]
    return [f'Step "{steps[key]}" is already in group "{taken[key]}".' for key in members if key in taken]


def check_step_count(count: int, field: str) -> None:
    if count > MAX_STEPS:
        raise Invalid({field: [f"A workflow holds at most {MAX_STEPS} steps."]})


def _whole(value, maximum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= maximum


def normalized_events(events) -> dict:
    if events is not None and not isinstance(events, dict):
        return events  # left as given for events_errors to refuse
    base = {"on_enter": [], "on_turn_complete": [], "on_exit": []}
    base.update(events or {})
    return base


def without_moves_to(events: dict, step_id) -> dict:
    """`events` minus the move_to_step actions that target `step_id`."""

    def targets(action) -> bool:
        if not isinstance(action, dict) or action.get("type") != "move_to_step":
            return False
        config = action.get("config")
        return isinstance(config, dict) and config.get("step_id") == str(step_id)

    return {
        key: [a for a in actions if not targets(a)] if isinstance(actions, list) else actions
        for key, actions in (events or {}).items()
    }
