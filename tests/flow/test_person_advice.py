"""Limit advice for people: Little's law on the tasks assigned to each limited person in
this board's active steps, measured by the assignment events; and every advice row judged
by the limit in force at each instant (at its limit, never reached, always at it).

Board: Backlog (backlog) -> Doing -> Review (both active) -> Done (done). Window: hours 0
to 11. pat's limit was 2 until hour 5, when it was lowered to 1.
  A  created in Backlog at 0, assigned to pat at 1, Doing at 2, Done at 6:   pat 2-6
  B  created in Doing at 1 (assigned to pat, no assignment since), Review at 5 (no
     departure: both active), Done at 9:                                      pat 1-9
  C  created in Doing at 3 while sam's; pat's at 4; unassigned at 7:          pat 4-7
  E  in Doing since hour -1, quinn's (limit 1) all along: quinn 0-11
pat holds 4 + 8 + 3 = 15 task-hours over 11 hours; A, C and B leave at 6, 7 and 9.
pat's occupancy: 1 from 1, 2 from 2, 3 from 4, 2 from 6, 1 from 7, 0 from 9; at the limit
2-4 (2 of 2) and 7-9 (1 of 1), over it 4-7.
Cycle times: A 4 h (2 -> 6), B 8 h (1 -> 9): average 6 h; the standard SLE is 1 day."""

import uuid

import pytest

from flow import analytics, figures
from flow.figures import Window
from tests.factories import MembershipFactory, StepFactory, UserFactory
from tests.flow.factories import TaskEventFactory, TaskFactory
from tests.flow.history import hours
from workflows.models import ConfigChange, StepGroup

WINDOW = Window(hours(0), hours(11))
DAYS = 11 / 24


@pytest.fixture
def people(workflow):
    def member(name, limit):
        user = UserFactory(username=name)
        MembershipFactory(workspace=workflow.workspace, user=user, wip_limit=limit)
        return user

    return {name: member(name, limit) for name, limit in (("pat", 1), ("quinn", 1), ("rae", 5), ("sam", 0))}


@pytest.fixture
def assigned(workflow, people):
    bl = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind="backlog")
    do = StepFactory(workflow=workflow, name="Doing", position=1)
    rv = StepFactory(workflow=workflow, name="Review", position=2)
    dn = StepFactory(workflow=workflow, name="Done", position=3, kind="done")
    pat, sam, quinn = people["pat"], people["sam"], people["quinn"]
    a, c = uuid.uuid4(), uuid.uuid4()  # their assignees come from their events alone
    b = TaskFactory(step=dn, title="B", assignee=pat).pk
    e = TaskFactory(step=do, title="E", assignee=quinn).pk

    def event(task, kind, at, src=None, dst=None, **detail):
        TaskEventFactory(
            workflow=workflow,
            task_id=task,
            kind=kind,
            at=hours(at),
            from_step_id=getattr(src, "pk", None),
            to_step_id=getattr(dst, "pk", None),
            detail=detail,
        )

    def assign(task, at, step, user, previous):
        event(task, "assigned", at, dst=step, action="assign", assignee_id=user, previous=previous)

    event(e, "created", -1, dst=do)
    event(a, "created", 0, dst=bl)
    assign(a, 1, bl, pat.pk, None)
    event(b, "created", 1, dst=do)
    event(a, "moved", 2, bl, do)
    event(c, "created", 3, dst=do)
    assign(c, 4, do, pat.pk, sam.pk)
    event(b, "moved", 5, do, rv)
    event(a, "moved", 6, do, dn)
    assign(c, 7, do, None, pat.pk)
    event(b, "moved", 9, rv, dn)
    ConfigChange.objects.create(
        workspace_id=workflow.workspace_id,
        workflow=None,
        scope="person",
        subject_id=str(pat.pk),
        name="pat",
        field="wip_limit",
        before=2,
        after=1,
        at=hours(5),
    )


def rows(workflow):
    return {(row["scope"], row["name"]): row for row in analytics.advice(workflow, WINDOW)["limits"]}


def test_a_person_s_little_s_law_from_their_assignments(workflow, people, assigned):
    pat = rows(workflow)[("person", "pat")]
    assert (pat["id"], pat["limit"]) == (people["pat"].pk, 1)
    assert pat["avg_wip"] == pytest.approx(15 / 11)
    assert pat["throughput_per_day"] == pytest.approx(3 / DAYS)
    assert pat["avg_cycle_days"] == pytest.approx(5 / 24)  # W = L / λ: 15 task-hours over 3 departures
    # λ × W × SLE / average cycle = 15/11 × 24 / 6 = 5.45
    assert pat["suggested_limit"] == 6
    assert pat["arithmetic"].startswith("6.55 tasks/day × 0.83 days = 5.45, rounded up to 6")


def test_a_person_is_judged_by_the_limit_in_force_at_each_instant(workflow, people, assigned):
    pat = rows(workflow)[("person", "pat")]
    assert pat["at_limit_ratio"] == pytest.approx(4 / 11)  # 2-4 at 2 of 2, 7-9 at 1 of 1
    assert (pat["never_reached"], pat["always_at_limit"]) == (False, False)


def test_always_at_limit_and_never_reached(workflow, people, assigned):
    advised = rows(workflow)
    quinn = advised[("person", "quinn")]
    assert (quinn["avg_wip"], quinn["throughput_per_day"], quinn["at_limit_ratio"]) == (1, 0, 1)
    assert (quinn["never_reached"], quinn["always_at_limit"], quinn["suggested_limit"]) == (False, True, None)
    assert quinn["arithmetic"] == "No task left it in the window: no throughput to judge by."
    rae = advised[("person", "rae")]
    assert (rae["avg_wip"], rae["at_limit_ratio"], rae["never_reached"], rae["always_at_limit"]) == (0, 0, True, False)
    # sam has no limit, now or in the window; the owner neither.
    assert [name for scope, name in advised if scope == "person"] == ["pat", "quinn", "rae"]


def test_people_are_advised_through_the_api_and_the_csv(api, workflow, people, assigned):
    window = {"from": WINDOW.start.isoformat(), "to": WINDOW.end.isoformat()}
    url = f"/api/v1/workflows/{workflow.pk}/flow/advice/"
    body = api.get(url, window).json()
    pat = next(row for row in body["limits"] if row["name"] == "pat")
    assert (pat["scope"], pat["id"], pat["suggested_limit"], pat["never_reached"]) == (
        "person",
        people["pat"].pk,
        6,
        False,
    )
    csv = api.get(url, {**window, "format": "csv"}).content.decode()
    head, *lines = csv.splitlines()
    assert head.endswith("at_limit_ratio,never_reached,always_at_limit")
    assert any(
        line.startswith(f"person,{people['quinn'].pk},quinn,1,") and line.endswith(",False,True") for line in lines
    )


def ledger(workflow):
    return {(row["scope"], row["name"]): row for row in figures.limits(workflow, WINDOW)["limits"]}


def test_the_ledger_judges_each_person_by_the_limit_in_force_then(workflow, people, assigned):
    """pat: at the limit 2-4 and 7-9, over it 4-7 (3 tasks of 2, then of 1 from hour 5: 2
    over at most); quinn at the limit all along; rae (5) never reached; sam has no limit."""
    rows = ledger(workflow)
    pat, quinn, rae = rows[("person", "pat")], rows[("person", "quinn")], rows[("person", "rae")]
    assert (pat["id"], pat["limit"]) == (str(people["pat"].pk), 1)
    assert pat["at_limit_ratio"] == pytest.approx(4 / 11)
    assert pat["over_limit_ratio"] == pytest.approx(3 / 11)
    (breach,) = pat["breaches"]
    assert (breach["started_at"], breach["ended_at"], breach["max_over"]) == (hours(4), hours(7), 2)
    assert (quinn["at_limit_ratio"], quinn["over_limit_ratio"], quinn["never_reached"]) == (1.0, 0.0, False)
    assert (rae["at_limit_ratio"], rae["never_reached"]) == (0.0, True)
    assert ("person", "sam") not in rows


def test_the_ledger_counts_a_group_over_its_steps(workflow, people, assigned):
    """Doing + Review, limit 2: E from the start, B 1-9, A 2-6, C from 3 on: 1 task, 2 from
    hour 1, 3 from 2, 4 from 3, 3 from 6, 2 from 9: at the limit 1-2 and 9-11, over it 2-9."""
    group = StepGroup.objects.create(workflow=workflow, name="Doing + Review", wip_limit=2)
    workflow.steps.filter(name__in=["Doing", "Review"]).update(group=group)
    row = ledger(workflow)[("group", "Doing + Review")]
    assert (row["id"], row["at_limit_ratio"]) == (str(group.pk), pytest.approx(3 / 11))
    assert row["over_limit_ratio"] == pytest.approx(7 / 11)
    (breach,) = row["breaches"]
    assert (breach["started_at"], breach["ended_at"], breach["max_over"]) == (hours(2), hours(9), 2)


def test_a_forced_admission_is_a_cause_of_its_assignee_s_breach(workflow, owner, people, assigned):
    """quinn (limit 1) holds E; F, forced into Doing at hour 3 and quinn's now, is the cause
    of the breach from 3 until F leaves at 5."""
    doing, done = workflow.steps.get(name="Doing"), workflow.steps.get(name="Done")
    forced = TaskFactory(step=done, title="F", assignee=people["quinn"]).pk
    TaskEventFactory(
        workflow=workflow, task_id=forced, kind="forced", to_step_id=doing.pk, at=hours(3), actor=owner, reason="fix"
    )
    TaskEventFactory(
        workflow=workflow, task_id=forced, kind="moved", from_step_id=doing.pk, to_step_id=done.pk, at=hours(5)
    )
    (breach,) = ledger(workflow)[("person", "quinn")]["breaches"]
    assert (breach["started_at"], breach["ended_at"]) == (hours(3), hours(5))
    assert [(c["kind"], c["actor"], c["reason"]) for c in breach["causes"]] == [("forced", "olivia", "fix")]
