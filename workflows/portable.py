"""Portable workflow documents: templates, export and import.

Steps refer to each other by position (`pull_from_step_position`, and
`{"step_position": N}` in move_to_step actions), and groups to their steps likewise
(`step_positions`), never by instance id; so do lanes' cell limits (`cells: [{"step_position",
"wip_limit"}]`). A document without `lanes` gives each workflow one lane.

Version 2 documents also carry each workflow's `tasks` (written and read by the boards app,
boards/backup.py: tasks are a board's), version 3 their history too; version 1 documents
(structure only) still import.
"""

import json
from pathlib import Path

import yaml
from django.conf import settings
from rest_framework import status

from common.errors import Invalid, KandevError
from common.parsers import json_depth
from workflows.models import (
    Lane,
    LaneCell,
    OnFull,
    OnSessionLimit,
    StepGroup,
    StepKind,
    Workflow,
    WorkflowStep,
    create_first_lane,
)
from workflows.step_rules import (
    DEFAULT_COLOR,
    MAX_LANES,
    MAX_NAME,
    MAX_STEPS,
    MAX_WIP_LIMIT,
    check_step_count,
    feeder_errors,
    group_errors,
    name_errors,
    normalized_events,
    step_errors,
)

TEMPLATES_DIR = Path(__file__).parent / "templates"
DOCUMENT_TYPE = "kandev_workflow"
DOCUMENT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
MAX_WORKFLOWS = 100  # per document
# A real document nests about nine levels deep; far deeper is an attack on the parser.
MAX_DOCUMENT_DEPTH = 24


class MalformedDocument(KandevError):
    """The body is not well-formed YAML/JSON (400, with line and column when known)."""

    code = "parse_error"


class DocumentTooLarge(KandevError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    code = "payload_too_large"

    def __init__(self):
        super().__init__(f"The document is larger than {max_document_bytes() // 1024} KiB.")


def max_document_bytes() -> int:
    """The largest import body read (KANDEV_MAX_IMPORT_BYTES): a backup carries its tasks."""
    return settings.KANDEV_MAX_IMPORT_BYTES


class _PlainLoader(yaml.SafeLoader):
    """safe_load without anchors and aliases (no alias bombs) and with a nesting limit."""

    depth = 0

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.composer.ComposerError(None, None, "anchors and aliases are not allowed", event.start_mark)
        if self.depth >= MAX_DOCUMENT_DEPTH:
            raise yaml.composer.ComposerError(
                None, None, f"nested deeper than {MAX_DOCUMENT_DEPTH} levels", event.start_mark
            )
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def parse_document(raw: bytes, *, fmt: str):
    """Parse a YAML (`fmt="yaml"`) or JSON body; MalformedDocument on anything unreadable."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedDocument(f"The document is not UTF-8 text (byte {exc.start}).") from None
    if fmt == "json":
        return _parse_json(text)
    try:
        return yaml.load(text, Loader=_PlainLoader)  # a SafeLoader: safe_load, guarded
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise MalformedDocument(f"Malformed YAML{where}: {exc.problem or exc.context}.") from None
    except (yaml.YAMLError, ValueError) as exc:  # ValueError: e.g. an int of 5000 digits
        raise MalformedDocument(f"Malformed YAML: {exc}.") from None


def _parse_json(text: str):
    too_deep = f"Malformed JSON: nested deeper than {MAX_DOCUMENT_DEPTH} levels."
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MalformedDocument(f"Malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}.") from None
    except ValueError as exc:
        raise MalformedDocument(f"Malformed JSON: {exc}.") from None
    except RecursionError:
        raise MalformedDocument(too_deep) from None
    if json_depth(document) > MAX_DOCUMENT_DEPTH:
        raise MalformedDocument(too_deep)
    return document


def templates() -> dict[str, dict]:
    docs = (yaml.safe_load(path.read_text()) for path in sorted(TEMPLATES_DIR.glob("*.yaml")))
    return {doc["id"]: doc for doc in docs}


def _events_by_position(events: dict, to_position) -> dict:
    """Map move_to_step targets between step ids and positions with `to_position`."""
    mapped = {}
    for key, actions in normalized_events(events).items():
        if not isinstance(actions, list):
            mapped[key] = actions  # left for events_errors to report
            continue
        mapped[key] = []
        for action in actions:
            if isinstance(action, dict) and action.get("type") == "move_to_step":
                config = action.get("config")
                config = config if isinstance(config, dict) else {}
                action = {**action, "config": to_position(config)}
            mapped[key].append(action)
    return mapped


def export_steps(steps: list[WorkflowStep]) -> list[dict]:
    position_of = {str(s.pk): s.position for s in steps}
    return [
        {
            "name": s.name,
            "position": s.position,
            "color": s.color,
            "kind": s.kind,
            "is_start_step": s.is_start_step,
            "wip_limit": s.wip_limit,
            "pull_from_step_position": position_of.get(str(s.pull_from_step_id)),
            "on_full": s.on_full,
            "events": _events_by_position(
                s.events,
                lambda config: {"step_position": position_of.get(str(config.get("step_id")))},
            ),
        }
        for s in sorted(steps, key=lambda s: s.position)
    ]


def export_groups(groups, steps: list[WorkflowStep]) -> list[dict]:
    return [
        {
            "name": group.name,
            "wip_limit": group.wip_limit,
            "step_positions": sorted(s.position for s in steps if s.group_id == group.pk),
        }
        for group in groups
    ]


def export_workflow(workflow: Workflow) -> dict:
    steps = list(workflow.steps.all())
    return {
        "name": workflow.name,
        "description": workflow.description,
        "max_parallel_sessions": workflow.max_parallel_sessions,
        "on_session_limit": workflow.on_session_limit,
        "expedite_limit": workflow.expedite_limit,
        "steps": export_steps(steps),
        "groups": export_groups(workflow.step_groups.all(), steps),
        "lanes": export_lanes(workflow, steps),
    }


def export_lanes(workflow: Workflow, steps: list[WorkflowStep]) -> list[dict]:
    """The workflow's lanes in board order, each with its cell limits by step position."""
    positions = {step.pk: step.position for step in steps}
    lanes = workflow.lanes.order_by("position", "created_at", "id").prefetch_related("cells")
    return [
        {
            "name": lane.name,
            "wip_limit": lane.wip_limit,
            "is_expedite": lane.is_expedite,
            "cells": sorted(
                ({"step_position": positions[cell.step_id], "wip_limit": cell.wip_limit} for cell in lane.cells.all()),
                key=lambda cell: cell["step_position"],
            ),
        }
        for lane in lanes
    ]


def export_document(workflows) -> dict:
    """The portable document of `workflows`: what import reads back."""
    return {
        "version": DOCUMENT_VERSION,
        "type": DOCUMENT_TYPE,
        "workflows": [export_workflow(workflow) for workflow in workflows],
    }


def import_document(workspace, document) -> list[Workflow]:
    """Validate a portable document and create its workflows, inside the caller's transaction.

    Errors of every workflow are collected and raised together; the caller's rollback
    removes whatever was created before the raise, so import is all-or-nothing.
    """
    errors, created = {}, []
    for i, doc in enumerate(_workflow_docs(document)):
        prefix = f"workflows[{i}]"
        if not isinstance(doc, dict):
            errors[prefix] = ["Must be a mapping with name, description and steps."]
            continue
        fields, problems = _workflow_fields(doc)
        errors.update({f"{prefix}.{key}": messages for key, messages in problems.items()})
        if problems:
            continue
        workflow = Workflow.objects.create(workspace=workspace, **fields)
        try:
            steps = build_steps(workflow, doc.get("steps"))
            build_groups(workflow, doc.get("groups"), steps)
            build_lanes(workflow, doc.get("lanes"), steps)
        except Invalid as exc:
            errors.update({f"{prefix}.{key}": msgs for key, msgs in exc.extra["errors"].items()})
        created.append(workflow)
    if errors:
        raise Invalid(errors, detail="The workflow document is invalid; nothing was imported.")
    return created


def _workflow_docs(document) -> list:
    if not isinstance(document, dict):
        raise Invalid({"document": ["Must be a mapping with version, type and workflows."]})
    errors = {}
    if document.get("type") != DOCUMENT_TYPE:
        errors["type"] = [f'Must be "{DOCUMENT_TYPE}".']
    if _int(document.get("version"), None) not in READABLE_VERSIONS:
        readable = " and ".join(str(v) for v in READABLE_VERSIONS)
        errors["version"] = [f"Unsupported version; this server reads versions {readable}."]
    workflows = document.get("workflows")
    if not isinstance(workflows, list) or not workflows:
        errors["workflows"] = ["A list of at least one workflow is required."]
    elif len(workflows) > MAX_WORKFLOWS:
        errors["workflows"] = [f"A document holds at most {MAX_WORKFLOWS} workflows."]
    else:
        # Bounds first, over the whole document: an oversized one costs no per-step work.
        for i, doc in enumerate(workflows):
            steps = doc.get("steps") if isinstance(doc, dict) else None
            if isinstance(steps, list) and len(steps) > MAX_STEPS:
                errors[f"workflows[{i}].steps"] = [f"A workflow holds at most {MAX_STEPS} steps."]
    if errors:
        raise Invalid(errors, detail="This is not a kandev workflow document this server can read.")
    return workflows


def _workflow_fields(doc: dict) -> tuple[dict, dict]:
    fields = {
        "name": doc.get("name"),
        "description": doc.get("description") or "",
        "max_parallel_sessions": doc.get("max_parallel_sessions", 0),
        "on_session_limit": doc.get("on_session_limit", OnSessionLimit.QUEUE),
        "expedite_limit": doc.get("expedite_limit", 1),  # documents from before expedite: the default
    }
    errors = {}
    if name_errors(fields["name"]):
        errors["name"] = name_errors(fields["name"])
    if not isinstance(fields["description"], str) or len(fields["description"]) > 10_000:
        errors["description"] = ["Must be text of at most 10000 characters."]
    if not 0 <= _int(fields["max_parallel_sessions"], -1) <= 1_000_000:
        errors["max_parallel_sessions"] = ["Must be a whole number from 0 to 1000000."]
    if fields["on_session_limit"] not in OnSessionLimit.values:
        errors["on_session_limit"] = ['Must be "queue" or "reject".']
    if not 0 <= _int(fields["expedite_limit"], -1) <= MAX_WIP_LIMIT:
        errors["expedite_limit"] = [f"Must be a whole number from 0 to {MAX_WIP_LIMIT}."]
    return fields, errors


def build_steps(workflow, step_docs) -> list[WorkflowStep]:
    """Validate step documents and create the workflow's steps (inside the caller's transaction)."""
    if not isinstance(step_docs, list) or not step_docs:
        raise Invalid({"steps": ["A workflow needs a list of at least one step."]})
    check_step_count(len(step_docs), "steps")
    errors: dict[str, list[str]] = {}

    def error(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    docs = sorted((d for d in step_docs if isinstance(d, dict)), key=lambda d: _int(d.get("position"), 0))
    if len(docs) != len(step_docs):
        raise Invalid({"steps": ["Every step must be an object."]})
    positions = [_int(d.get("position"), -1) for d in docs]
    if sorted(positions) != list(range(len(docs))):
        errors.setdefault("steps", []).append("Step positions must be 0..n-1, each once.")
    steps = []
    for i, doc in enumerate(docs):
        values = {
            "name": doc.get("name"),
            "wip_limit": doc.get("wip_limit", 0),
            "on_full": doc.get("on_full", OnFull.REJECT),
            "is_start_step": doc.get("is_start_step", False),
            "color": doc.get("color") or DEFAULT_COLOR,
            "kind": doc.get("kind", StepKind.ACTIVE),  # documents from before kinds
        }
        for key, messages in step_errors(values, step_ids=set()).items():
            errors.setdefault(f"steps[{i}].{key}", []).extend(messages)
        steps.append(
            WorkflowStep(
                workflow=workflow,
                name=str(values["name"] or "")[:MAX_NAME],
                position=i,
                color=str(values["color"])[:32],
                is_start_step=values["is_start_step"] is True,
                wip_limit=values["wip_limit"] if isinstance(values["wip_limit"], int) else 0,
                on_full=values["on_full"],
                kind=values["kind"],
            )
        )
    if sum(s.is_start_step for s in steps) > 1:
        errors.setdefault("steps", []).append("At most one step can be the start step.")
    by_position = {i: s for i, s in enumerate(steps)}
    feeders = {}
    for i, doc in enumerate(docs):
        feeder = doc.get("pull_from_step_position")
        if feeder is not None and _int(feeder, -1) not in by_position:
            error(f"steps[{i}].pull_from_step_position", f"No step at position {feeder}.")
            feeder = None
        feeders[i] = feeder
    for i, feeder in feeders.items():
        problems = feeder_errors(i, feeder, feeders)
        if problems:
            errors.setdefault(f"steps[{i}].pull_from_step_position", []).extend(problems)
    step_ids = {str(s.pk) for s in steps}
    for i, (doc, step) in enumerate(zip(docs, steps, strict=True)):
        events = doc.get("events") or {}
        if not isinstance(events, dict):
            error(f"steps[{i}].events", "Must be a mapping of on_enter, on_turn_complete, on_exit.")
            continue
        unknown = []

        def to_id(config, unknown=unknown):
            position = config.get("step_position")
            target = by_position.get(_int(position, -1))
            if target is None:
                unknown.append(position)
            # Other keys stay, for the step rules to refuse.
            others = {k: v for k, v in config.items() if k != "step_position"}
            return {**others, "step_id": str(target.pk) if target else None}

        step.events = _events_by_position(events, to_id)
        # Unknown targets are named by position here, rather than as the missing step ids
        # events_errors would report.
        problems = [f"move_to_step: no step at position {p}." for p in unknown]
        problems += [
            p
            for p in step_errors({"events": step.events}, step_ids=step_ids).get("events", [])
            if not (unknown and "move_to_step" in p)
        ]
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


def build_groups(workflow, group_docs, steps: list[WorkflowStep]) -> list[StepGroup]:
    """Validate group documents and create the workflow's groups over its `steps` (in
    position order, as build_steps returns them), inside the caller's transaction."""
    if group_docs is None:  # documents from before groups
        return []
    if not isinstance(group_docs, list):
        raise Invalid({"groups": ["Must be a list of groups."]})
    errors: dict[str, list[str]] = {}
    names = {position: step.name for position, step in enumerate(steps)}
    taken: dict[int, str] = {}  # step position -> the group it is in
    groups = []
    for i, doc in enumerate(group_docs):
        if not isinstance(doc, dict):
            errors[f"groups[{i}]"] = ["Must be a mapping with name, wip_limit and step_positions."]
            continue
        values = {key: doc.get(key) for key in ("name", "wip_limit", "step_positions")}
        members = values["step_positions"]
        if isinstance(members, list) and any(_int(p, None) is None for p in members):
            problems = {"step_positions": ["Must be a list of step positions."]}
        else:
            problems = group_errors(values, steps=names, taken=taken, steps_field="step_positions")
        if problems:
            errors.update({f"groups[{i}].{key}": messages for key, messages in problems.items()})
            continue
        taken.update(dict.fromkeys(members, values["name"]))
        groups.append((StepGroup(workflow=workflow, name=values["name"], wip_limit=values["wip_limit"]), members))
    if errors:
        raise Invalid(errors)
    StepGroup.objects.bulk_create([group for group, _ in groups])
    for group, members in groups:
        for position in members:
            steps[position].group = group
    WorkflowStep.objects.bulk_update([s for s in steps if s.group_id], ["group"])
    return [group for group, _ in groups]


def build_lanes(workflow, lane_docs, steps: list[WorkflowStep]) -> list[Lane]:
    """Validate lane documents and create the workflow's lanes (in the order given, the
    expedite lane first) and their cells over its `steps`; documents from before lanes give
    it one lane."""
    if lane_docs is None:
        return [create_first_lane(workflow)]
    if not isinstance(lane_docs, list) or not 1 <= len(lane_docs) <= MAX_LANES:
        raise Invalid({"lanes": [f"Must be a list of 1 to {MAX_LANES} lanes."]})
    errors: dict[str, list[str]] = {}
    lanes, cells = [], []
    for i, doc in enumerate(lane_docs):
        key = f"lanes[{i}]"
        if not isinstance(doc, dict):
            errors[key] = ["Must be a mapping with name, wip_limit, is_expedite and cells."]
            continue
        if name_errors(doc.get("name")):
            errors[f"{key}.name"] = name_errors(doc.get("name"))
        limit = _int(doc.get("wip_limit", 0), -1)
        if not 0 <= limit <= MAX_WIP_LIMIT:
            errors[f"{key}.wip_limit"] = [f"Must be a whole number from 0 to {MAX_WIP_LIMIT}."]
        expedite = doc.get("is_expedite", False)
        if not isinstance(expedite, bool):
            errors[f"{key}.is_expedite"] = ["Must be true or false."]
        lane = Lane(workflow=workflow, name=doc.get("name"), wip_limit=limit, is_expedite=expedite is True)
        lanes.append(lane)
        cell_docs = doc.get("cells", [])
        if not isinstance(cell_docs, list) or len(cell_docs) > len(steps):
            errors[f"{key}.cells"] = ["Must be a list of cells, at most one per step."]
            continue
        seen = set()
        for j, cell in enumerate(cell_docs):
            position = _int(cell.get("step_position"), None) if isinstance(cell, dict) else None
            cell_limit = _int(cell.get("wip_limit"), 0) if isinstance(cell, dict) else 0
            if position is None or not 0 <= position < len(steps) or position in seen:
                errors[f"{key}.cells[{j}].step_position"] = ["Must be the position of a step, each at most once."]
            elif not 1 <= cell_limit <= MAX_WIP_LIMIT:
                errors[f"{key}.cells[{j}].wip_limit"] = [f"Must be a whole number from 1 to {MAX_WIP_LIMIT}."]
            else:
                seen.add(position)
                cells.append(LaneCell(lane=lane, step=steps[position], wip_limit=cell_limit))
    if sum(1 for lane in lanes if lane.is_expedite) > 1:
        errors["lanes"] = ["At most one expedite lane."]
    if errors:
        raise Invalid(errors)
    lanes.sort(key=lambda lane: not lane.is_expedite)  # the expedite lane is first
    for position, lane in enumerate(lanes):
        lane.position = position
    Lane.objects.bulk_create(lanes)
    LaneCell.objects.bulk_create(cells)
    return lanes


def _int(value, default):
    return value if isinstance(value, int) and not isinstance(value, bool) else default
