"""Configuration rules for steps (product.md §4). Violations are 400 with field errors."""

from kandev.errors import Invalid

ACTION_TYPES = {
    "on_enter": {"auto_start_agent", "move_to_next", "move_to_previous", "move_to_step"},
    "on_turn_complete": {"move_to_next", "move_to_previous", "move_to_step"},
    "on_exit": {"auto_start_agent", "move_to_next", "move_to_previous", "move_to_step"},
}
MAX_WIP_LIMIT = 100_000


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


def events_errors(events, step_ids: set) -> list[str]:
    """Validate `{"on_enter": [...], ...}` action lists; `move_to_step` targets must be in `step_ids`."""
    if not isinstance(events, dict):
        return ["Must be an object with on_enter, on_turn_complete and on_exit lists."]
    errors = []
    for key, actions in events.items():
        if key not in ACTION_TYPES:
            errors.append(f'Unknown event "{key}".')
            continue
        if not isinstance(actions, list):
            errors.append(f"{key} must be a list of actions.")
            continue
        for action in actions:
            kind = action.get("type") if isinstance(action, dict) else None
            if not isinstance(kind, str) or kind not in ACTION_TYPES[key]:
                errors.append(f'{key}: unknown action "{kind}".')
            elif kind == "move_to_step":
                config = action.get("config")
                target = config.get("step_id") if isinstance(config, dict) else None
                if str(target) not in step_ids:
                    errors.append(f"{key}: move_to_step needs config.step_id, a step of this workflow.")
    return errors


def normalized_events(events) -> dict:
    if events is not None and not isinstance(events, dict):
        return events  # left as given for events_errors to refuse
    base = {"on_enter": [], "on_turn_complete": [], "on_exit": []}
    base.update(events or {})
    return base


def check_wip_limit(value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > MAX_WIP_LIMIT:
        raise Invalid({"wip_limit": [f"Must be a whole number from 0 to {MAX_WIP_LIMIT}."]})


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
