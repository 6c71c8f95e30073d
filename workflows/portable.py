"""Portable workflow documents: templates, export and import (product.md §4).

Steps refer to each other by position (`pull_from_step_position`, and
`{"step_position": N}` in move_to_step actions), never by instance id.
"""

from pathlib import Path

import yaml

from kandev.errors import Invalid
from workflows.models import OnFull, WorkflowStep
from workflows.step_rules import MAX_WIP_LIMIT, events_errors, feeder_errors, normalized_events

TEMPLATES_DIR = Path(__file__).parent / "templates"
DOCUMENT_TYPE = "kandev_workflow"


def templates() -> dict[str, dict]:
    docs = (yaml.safe_load(path.read_text()) for path in sorted(TEMPLATES_DIR.glob("*.yaml")))
    return {doc["id"]: doc for doc in docs}


def _events_by_position(events: dict, to_position) -> dict:
    """Map move_to_step targets between step ids and positions with `to_position`."""
    mapped = {}
    for key, actions in normalized_events(events).items():
        mapped[key] = []
        for action in actions if isinstance(actions, list) else []:
            if isinstance(action, dict) and action.get("type") == "move_to_step":
                action = {**action, "config": to_position(action.get("config") or {})}
            mapped[key].append(action)
    return mapped


def export_steps(steps: list[WorkflowStep]) -> list[dict]:
    position_of = {str(s.pk): s.position for s in steps}
    return [
        {
            "name": s.name,
            "position": s.position,
            "color": s.color,
            "is_start_step": s.is_start_step,
            "wip_limit": s.wip_limit,
            "pull_from_step_position": position_of.get(str(s.pull_from_step_id)),
            "on_full": s.on_full,
            "events": _events_by_position(
                s.events, lambda config: {"step_position": position_of.get(str(config.get("step_id")))}
            ),
        }
        for s in sorted(steps, key=lambda s: s.position)
    ]


def build_steps(workflow, step_docs) -> list[WorkflowStep]:
    """Validate step documents and create the workflow's steps (inside the caller's transaction)."""
    if not isinstance(step_docs, list) or not step_docs:
        raise Invalid({"steps": ["A workflow needs a list of at least one step."]})
    errors: dict[str, list[str]] = {}
    docs = sorted(
        (d for d in step_docs if isinstance(d, dict)), key=lambda d: _int(d.get("position"), 0)
    )
    if len(docs) != len(step_docs):
        raise Invalid({"steps": ["Every step must be an object."]})
    positions = [_int(d.get("position"), -1) for d in docs]
    if sorted(positions) != list(range(len(docs))):
        errors.setdefault("steps", []).append("Step positions must be 0..n-1, each once.")
    steps = []
    for i, doc in enumerate(docs):
        field = f"steps[{i}]"
        name = doc.get("name")
        wip_limit = doc.get("wip_limit", 0)
        on_full = doc.get("on_full", OnFull.REJECT)
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            errors.setdefault(f"{field}.name", []).append("A name of 1 to 200 characters is required.")
        if not isinstance(wip_limit, int) or isinstance(wip_limit, bool) or not 0 <= wip_limit <= MAX_WIP_LIMIT:
            errors.setdefault(f"{field}.wip_limit", []).append(f"Must be a whole number from 0 to {MAX_WIP_LIMIT}.")
        if on_full not in OnFull.values:
            errors.setdefault(f"{field}.on_full", []).append('Must be "reject" or "queue".')
        steps.append(
            WorkflowStep(
                workflow=workflow,
                name=str(name or "")[:200],
                position=i,
                color=str(doc.get("color") or "#64748b")[:32],
                is_start_step=bool(doc.get("is_start_step", False)),
                wip_limit=wip_limit if isinstance(wip_limit, int) else 0,
                on_full=on_full,
            )
        )
    if sum(s.is_start_step for s in steps) > 1:
        errors.setdefault("steps", []).append("At most one step can be the start step.")
    by_position = {i: s for i, s in enumerate(steps)}
    feeders = {}
    for i, doc in enumerate(docs):
        feeder = doc.get("pull_from_step_position")
        if feeder is not None and (not isinstance(feeder, int) or feeder not in by_position):
            errors.setdefault(f"steps[{i}].pull_from_step_position", []).append(f"No step at position {feeder}.")
            feeder = None
        feeders[i] = feeder
    for i, feeder in feeders.items():
        problems = feeder_errors(i, feeder, feeders)
        if problems:
            errors.setdefault(f"steps[{i}].pull_from_step_position", []).extend(problems)
    for i, (doc, step) in enumerate(zip(docs, steps, strict=True)):
        def to_id(config, i=i):
            target = by_position.get(config.get("step_position"))
            return {"step_id": str(target.pk) if target else None}

        step.events = _events_by_position(doc.get("events") or {}, to_id)
        problems = events_errors(step.events, {str(s.pk) for s in steps})
        if problems:
            errors.setdefault(f"steps[{i}].events", []).extend(problems)
    if errors:
        raise Invalid(errors)
    if not any(s.is_start_step for s in steps):
        steps[0].is_start_step = True
    WorkflowStep.objects.bulk_create(steps)
    for i, feeder in feeders.items():
        if feeder is not None:
            steps[i].pull_from_step = by_position[feeder]
    WorkflowStep.objects.bulk_update([s for s in steps if s.pull_from_step_id], ["pull_from_step"])
    return steps


def _int(value, default):
    return value if isinstance(value, int) and not isinstance(value, bool) else default
