"""What a move meets at admission, by the shared table of cases (admission_cases.json): each
case's board is built, the move is made through the one admission service, and its outcome
is the table's verdict, naming the same first full limit. The board's drag preview
(static/board/limits.js) is held to the same table in the browser
(tests/live/test_journeys_board.py, `the_page_judges_moves_as_the_table_does`)."""

import json
from pathlib import Path

import pytest
from django.utils import timezone

from boards.admission import task_move
from boards.models import Task
from boards.placement import GAP, Outcome
from boards.waiting import task_waiting
from common.errors import WipLimitReached
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows.models import Lane, LaneCell, Role, StepGroup, StepKind

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite]

TABLE = json.loads((Path(__file__).parent / "admission_cases.json").read_text())

# The name a refusal's body gives the full limit, as the table (and limits.js) names it.
NAMED = {
    "cell": lambda body: f"{body['lane']['name']} in {body['step']['name']}",
    "step": lambda body: body["step"]["name"],
    "lane": lambda body: body["lane"]["name"],
    "group": lambda body: body["group"]["name"],
    "person": lambda body: body["assignee"]["username"],
    "expedite": lambda body: "expedite",
}


def with_defaults(case: dict) -> dict:
    """The case with what it leaves out as the table's `defaults` say."""
    defaults = TABLE["defaults"]
    return {
        "expedite_limit": case.get("expedite_limit", defaults["expedite_limit"]),
        "steps": [{**defaults["step"], **step} for step in case["steps"]],
        "groups": case.get("groups", []),
        "lanes": [{**defaults["lane"], **lane} for lane in case.get("lanes", defaults["lanes"])],
        "cells": case.get("cells", []),
        "people": [{**defaults["person"], **person} for person in case.get("people", [])],
        "tasks": [{**defaults["task"], **task} for task in case["tasks"]],
    }


def build(workflow, case: dict) -> dict:
    """The case's board on `workflow`, written directly (a state, over a limit where the case
    says so, not a history of admissions). Returns the steps, lanes and tasks by the case's ids."""
    workflow.expedite_limit = case["expedite_limit"]
    workflow.save(update_fields=["expedite_limit"])
    groups = {
        g["id"]: StepGroup.objects.create(workflow=workflow, name=g["name"], wip_limit=g["wip_limit"])
        for g in case["groups"]
    }
    steps = {
        s["id"]: StepFactory(
            workflow=workflow,
            name=s["name"],
            position=i,
            is_start_step=i == 0,
            kind=s["kind"],
            wip_limit=s["wip_limit"],
            on_full=s["on_full"],
            group=groups.get(s["group_id"]),
        )
        for i, s in enumerate(case["steps"])
    }
    lanes = {}
    for i, spec in enumerate(case["lanes"]):
        fields = {
            "name": spec["name"],
            "position": i,
            "wip_limit": spec["wip_limit"],
            "is_expedite": spec["is_expedite"],
        }
        if i == 0:  # the board's own first lane
            lane = workflow.lanes.get()
            Lane.objects.filter(pk=lane.pk).update(**fields)
        else:
            lane = Lane.objects.create(workflow=workflow, **fields)
        lanes[spec["id"]] = lane
    for cell in case["cells"]:
        LaneCell.objects.create(lane=lanes[cell["lane_id"]], step=steps[cell["step_id"]], wip_limit=cell["wip_limit"])
    now = timezone.now()
    people = {}
    elsewhere = None
    for person in case["people"]:
        user = UserFactory(username=person["id"])
        MembershipFactory(workspace=workflow.workspace, user=user, role=Role.MEMBER, wip_limit=person["wip_limit"])
        people[person["id"]] = user
        if person["elsewhere"]:  # their work in progress on another board of the workspace
            if elsewhere is None:
                other = WorkflowFactory(workspace=workflow.workspace, name="Elsewhere")
                elsewhere = (other, StepFactory(workflow=other, name="Busy", kind=StepKind.ACTIVE))
            other, busy = elsewhere
            for n in range(person["elsewhere"]):
                other_lane = other.lanes.get()
                Task.objects.create(
                    workflow=other,
                    step=busy,
                    lane=other_lane,
                    title=f"{user.username} {n}",
                    assignee=user,
                    entered_step_at=now,
                )
    tasks = {}
    for i, task in enumerate(case["tasks"]):
        tasks[task["id"]] = Task.objects.create(
            workflow=workflow,
            step=steps[task["step_id"]],
            lane=lanes[task["lane_id"]],
            title=task["id"],
            position=(i + 1) * GAP,
            admitted=task["admitted"],
            queued_at=None if task["admitted"] else now,
            is_ephemeral=task["is_ephemeral"],
            assignee=people.get(task["assignee_id"]),
            class_of_service=task["class_of_service"],
            entered_step_at=now,
        )
    return {"steps": steps, "lanes": lanes, "tasks": tasks}


def verdict_of(world: dict, move: dict, actor) -> dict:
    """The move through the admission service: admitted (or expedited), queued (naming what
    holds it, as the task's `waiting` does) or refused (naming the first full limit)."""
    task = world["tasks"][move["task"]]
    lane = world["lanes"][move["lane_id"]].pk if move["lane_id"] else None
    try:
        admission = task_move(task=task, to_step=world["steps"][move["step_id"]], actor=actor, lane_id=lane)
    except WipLimitReached as refused:
        return {"verdict": "full", "scope": refused.scope, "name": NAMED[refused.scope](refused.extra)}
    if admission.outcome is Outcome.QUEUED:
        held = task_waiting(Task.objects.get(pk=task.pk))["held_by"][0]
        return {"verdict": "queue", "scope": held["scope"], "name": held["name"]}
    assert admission.outcome in (Outcome.ADMITTED, Outcome.EXPEDITED)
    return {"verdict": "admit", "scope": None, "name": None}


@pytest.mark.parametrize("case", TABLE["cases"], ids=[case["case"] for case in TABLE["cases"]])
def test_the_server_admits_each_move_as_the_table_does(case, workflow, owner):
    world = build(workflow, with_defaults(case))
    expected = {key: case["expected"][key] for key in ("verdict", "scope", "name")}
    assert verdict_of(world, case["move"], owner) == expected
