"""The configuration history: each change of a limit or flow rule recorded once, in its
change's transaction (a refused or rolled-back change records nothing); the ledger judging
each instant by the limit in force then; `/flow/limit-changes/` and the starting rows."""

import importlib
import uuid

import pytest
from django.apps import apps
from django.db import transaction
from rest_framework.test import APIClient

from boards import structure
from common.errors import Invalid
from flow import figures
from teams.services import member_update
from tests.conftest import member_client
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory, board
from tests.flow.factories import TaskEventFactory
from tests.flow.history import hours
from workflows.models import ConfigChange, Role


def rows(**filters):
    return [
        (c.scope, c.name, c.field, c.before, c.after, c.actor.username if c.actor else None)
        for c in ConfigChange.objects.filter(**filters).order_by("id")
    ]


def test_each_step_setting_is_recorded_with_actor_before_and_after(workflow, owner):
    backlog, doing, done = board(workflow)
    structure.step_update(step=doing, actor=owner, wip_limit=3, on_full="queue", kind="backlog")
    structure.step_update(step=doing, actor=owner, pull_from_step_id=None, name="Doing")
    assert rows() == [
        ("step", "In Progress", "kind", "active", "backlog", "olivia"),
        ("step", "In Progress", "on_full", "reject", "queue", "olivia"),
        ("step", "In Progress", "wip_limit", 2, 3, "olivia"),
        ("step", "Doing", "pull_from_step_id", str(backlog.pk), None, "olivia"),
    ]


def test_a_rename_or_a_colour_is_not_a_configuration_change(workflow, owner):
    backlog, doing, done = board(workflow)
    structure.step_update(step=doing, actor=owner, name="Doing", color="#000000")
    assert rows() == []


def test_a_created_and_a_deleted_step_have_no_before_and_no_after(workflow, owner):
    board(workflow)
    step = structure.step_create(workflow=workflow, actor=owner, name="Review", wip_limit=1)
    structure.step_delete(step=step, actor=owner)
    created = [(f, before, after) for _, _, f, before, after, _ in rows()][:4]
    assert created == [("kind", None, "active"), ("on_full", None, "reject"), ("pull_from_step_id", None, None),
                       ("wip_limit", None, 1)]  # fmt: skip
    deleted = [(f, before, after) for _, _, f, before, after, _ in rows()][4:]
    assert deleted == [("kind", "active", None), ("on_full", "reject", None), ("pull_from_step_id", None, None),
                       ("wip_limit", 1, None)]  # fmt: skip


def test_groups_and_the_expedite_allowance_are_recorded(workflow, owner):
    backlog, doing, review, done = board(workflow, active={"Doing": 2, "Review": 1})
    steps = [doing.pk, review.pk]
    group = structure.group_create(workflow=workflow, actor=owner, name="Work", wip_limit=3, step_ids=steps)
    structure.group_update(group=group, actor=owner, wip_limit=2)
    structure.group_delete(group=group, actor=owner)
    structure.workflow_update(workflow=workflow, actor=owner, expedite_limit=2)
    steps = sorted([str(doing.pk), str(review.pk)])
    assert rows() == [
        ("group", "Work", "step_ids", None, steps, "olivia"),
        ("group", "Work", "wip_limit", None, 3, "olivia"),
        ("group", "Work", "wip_limit", 3, 2, "olivia"),
        ("group", "Work", "step_ids", steps, None, "olivia"),
        ("group", "Work", "wip_limit", 2, None, "olivia"),
        ("board", "Delivery", "expedite_limit", 1, 2, "olivia"),
    ]


def test_lanes_and_cells_are_recorded(workflow, owner):
    backlog, doing, done = board(workflow)
    lane = structure.lane_create(workflow=workflow, actor=owner, name="Platform", wip_limit=3)
    structure.lane_update(lane=lane, actor=owner, wip_limit=2, name="Core")
    structure.cells_set(lane=lane, actor=owner, cells=[{"step_id": doing.pk, "wip_limit": 1}])
    structure.cells_set(lane=lane, actor=owner, cells=[])
    assert rows(scope__in=["lane", "cell"]) == [
        ("lane", "Platform", "is_expedite", None, False, "olivia"),
        ("lane", "Platform", "wip_limit", None, 3, "olivia"),
        ("lane", "Core", "wip_limit", 3, 2, "olivia"),
        ("cell", "Core × In Progress", "wip_limit", None, 1, "olivia"),
        ("cell", "Core × In Progress", "wip_limit", 1, None, "olivia"),
    ]


def test_a_person_limit_is_recorded_for_the_workspace(workflow, owner):
    member = UserFactory(username="mia")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    member_update(workspace=workflow.workspace, user_id=member.pk, wip_limit=2, actor=owner)
    member_update(workspace=workflow.workspace, user_id=member.pk, role=Role.VIEWER, actor=owner)  # not a limit
    assert rows(workflow__isnull=True, workspace=workflow.workspace) == [("person", "mia", "wip_limit", 0, 2, "olivia")]


def test_a_refused_change_records_nothing(workflow, owner):
    backlog, doing, done = board(workflow)
    with pytest.raises(Invalid):
        structure.step_update(step=doing, actor=owner, wip_limit=5, pull_from_step_id=doing.pk)  # feeds itself
    with pytest.raises(Invalid):
        structure.group_create(workflow=workflow, actor=owner, name="Alone", wip_limit=1, step_ids=[doing.pk])
    assert rows() == []


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_change_records_nothing(owner):
    workflow = WorkflowFactory(name="Delivery")
    MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
    backlog, doing, done = board(workflow)
    with pytest.raises(RuntimeError), transaction.atomic():
        structure.step_update(step=doing, actor=owner, wip_limit=5)
        assert len(rows()) == 1  # written inside the change's transaction
        raise RuntimeError("the request fails after the change")
    assert rows() == []
    structure.step_update(step=doing, actor=owner, wip_limit=5)
    assert rows() == [("step", "In Progress", "wip_limit", 2, 5, "olivia")]


def _change(workflow, step, at, before, after, actor=None):
    return ConfigChange.objects.create(
        workspace_id=workflow.workspace_id,
        workflow=workflow,
        scope="step",
        subject_id=str(step.pk),
        name=step.name,
        field="wip_limit",
        before=before,
        after=after,
        actor=actor,
        at=at,
    )


def _two_in_doing(workflow):
    """Doing (limit 1 today) holds A from hour 1 and B from hour 2 to hour 8."""
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, kind="backlog")
    doing = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=1)
    for task, start in (("A", 1), ("B", 2)):
        task_id = uuid.uuid5(uuid.NAMESPACE_DNS, task)
        TaskEventFactory(workflow=workflow, task_id=task_id, kind="created", to_step_id=doing.pk, at=hours(start))
        TaskEventFactory(
            workflow=workflow, task_id=task_id, kind="moved", from_step_id=doing.pk, to_step_id=backlog.pk, at=hours(8)
        )
    return doing


def test_the_ledger_judges_each_instant_by_the_limit_in_force_then(workflow, owner):
    """Limit 2 until hour 5, when olivia lowered it to 1: Doing was at its limit from 2 to
    5 and over it from 5 to 8, the breach caused by the lowering."""
    doing = _two_in_doing(workflow)
    _change(workflow, doing, hours(5), 2, 1, actor=owner)
    (row,) = figures.limits(workflow, figures.Window(hours(0), hours(10)))["limits"]
    assert row["at_limit_ratio"] == pytest.approx(3 / 10)  # 2..5 at 2 of 2 (1..2: 1 of 2)
    assert row["over_limit_ratio"] == pytest.approx(3 / 10)
    (breach,) = row["breaches"]
    assert (breach["started_at"], breach["ended_at"], breach["max_over"]) == (hours(5), hours(8), 1)
    assert breach["causes"] == [
        {"event_id": None, "kind": "limit_lowered", "actor": "olivia", "reason": "Limit lowered from 2 to 1."}
    ]


def test_today_s_limit_would_judge_the_same_history_otherwise(workflow):
    _two_in_doing(workflow)
    (row,) = figures.limits(workflow, figures.Window(hours(0), hours(10)))["limits"]
    assert row["over_limit_ratio"] == pytest.approx(6 / 10)  # over from 2 to 8 with no history


def test_a_step_unlimited_now_but_limited_in_the_window_is_in_the_ledger(workflow):
    doing = _two_in_doing(workflow)
    doing.wip_limit = 0
    doing.save()
    _change(workflow, doing, hours(4), 1, 0)  # limit 1 until hour 4, then none
    (row,) = figures.limits(workflow, figures.Window(hours(0), hours(10)))["limits"]
    assert (row["limit"], row["over_limit_ratio"], row["never_reached"]) == (0, pytest.approx(2 / 10), False)


def test_limit_changes_lists_the_window_a_page_at_a_time(api, workflow, owner):
    backlog, doing, done = board(workflow)
    for limit in (3, 4, 5):
        structure.step_update(step=doing, actor=owner, wip_limit=limit)
    base = f"/api/v1/workflows/{workflow.pk}/flow/limit-changes/"
    page = api.get(base, {"page_size": 2}).json()
    assert page["count"] == 3 and page["next"] and page["previous"] is None
    assert [(r["field"], r["before"], r["after"], r["actor"]) for r in page["results"]] == [
        ("wip_limit", 2, 3, "olivia"),
        ("wip_limit", 3, 4, "olivia"),
    ]
    assert [r["after"] for r in api.get(page["next"]).json()["results"]] == [5]
    before = {"from": "2024-01-01T00:00:00Z", "to": "2024-02-01T00:00:00Z"}
    assert api.get(base, before).json()["count"] == 0


@pytest.mark.parametrize(
    ("params", "field"), [({"page_size": 0}, "page_size"), ({"page_size": 1001}, "page_size"), ({"page": "x"}, "page")]
)
def test_limit_changes_refuses_bad_pages(api, workflow, params, field):
    response = api.get(f"/api/v1/workflows/{workflow.pk}/flow/limit-changes/", params)
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {field}


def test_limit_changes_is_for_members_only(workflow, owner):
    backlog, doing, done = board(workflow)
    structure.step_update(step=doing, actor=owner, wip_limit=3)
    url = f"/api/v1/workflows/{workflow.pk}/flow/limit-changes/"
    assert member_client(workflow.workspace, Role.VIEWER).get(url).json()["count"] == 1
    stranger = APIClient()
    stranger.force_authenticate(UserFactory())  # a member of no workspace of this board
    response = stranger.get(url)
    assert response.status_code == 404
    assert "wip_limit" not in response.content.decode()


def test_a_board_lists_its_workspace_s_person_limits_but_not_other_boards(api, workflow, owner):
    other = WorkflowFactory(workspace=workflow.workspace, name="Other")
    backlog, doing, done = board(other)
    structure.step_update(step=doing, actor=owner, wip_limit=3)
    member = UserFactory(username="mia")
    MembershipFactory(workspace=workflow.workspace, user=member, role=Role.MEMBER)
    member_update(workspace=workflow.workspace, user_id=member.pk, wip_limit=2, actor=owner)
    results = api.get(f"/api/v1/workflows/{workflow.pk}/flow/limit-changes/").json()["results"]
    assert [(r["scope"], r["name"]) for r in results] == [("person", "mia")]


def test_boards_from_before_the_history_get_their_configuration_as_starting_rows(workflow, owner):
    board(workflow, active={"Doing": 2, "Review": 1}, group=("Work", 3))
    migration = importlib.import_module("workflows.migrations.0005_flowhist")
    migration.starting_rows(apps, None)
    found = {(c.scope, c.name, c.field): (c.before, c.after) for c in ConfigChange.objects.filter(workflow=workflow)}
    assert found[("step", "Doing", "wip_limit")] == (2, 2)
    assert found[("step", "Review", "pull_from_step_id")] == (None, None)
    assert found[("group", "Work", "wip_limit")] == (3, 3)
    assert found[("board", "Delivery", "expedite_limit")] == (1, 1)
    person = ConfigChange.objects.get(scope="person", workspace=workflow.workspace, subject_id=str(owner.pk))
    assert (person.name, person.before, person.after, person.actor) == ("olivia", 0, 0, None)


def test_the_wip_chart_s_limit_follows_the_limit_in_force(workflow, owner):
    doing = _two_in_doing(workflow)
    _change(workflow, doing, hours(5), 2, 1, actor=owner)
    data = figures.wip(workflow, figures.Window(hours(0), hours(10)), "hour")
    limits = [p["limits"][str(doing.pk)] for p in data["points"]]
    assert limits == [2] * 5 + [1] * 6  # hours 0..4 at 2; from 5 (the change) at 1, today's
