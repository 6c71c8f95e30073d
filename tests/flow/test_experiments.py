"""Limit experiments against numbers computed by hand.

Days before now (Backlog -> Doing -> Done; each task created in Doing at its start, moved to
Done at its finish; F goes from Backlog straight to Done, so it has no cycle time):
  task   T0    T1   T2   T3   T4   T5    T6    F
  start  -9.5  -8   -9   -7   -4   -2.5  -2.5  (-3 in Backlog)
  finish -8.5  -7   -6   -5   -3   -1.5  -0.5  -0.25
Limit changes: Doing 3 -> 2 at -4 (olivia); at -1 Doing 2 -> 4 and pat's personal limit 0
-> 2 at one instant (one moment). With days=10 each span is the time since the change:
  at -4, 4 days: before [-8, -4) T1 T2 T3: 3 finished, cycles 1 2 3 days;
                 after [-4, 0] T4 T5 T6 F: 4 finished, cycles 1 1 2 days.
  at -1, 1 day:  before [-2, -1) T5: cycle 1; after [-1, 0] T6 F: cycle 2.
T0 finished before every span."""

from datetime import timedelta

import pytest
from django.utils import timezone

from flow.experiments import MAX_MOMENTS, experiments
from flow.kinds import BoardSteps
from tests.factories import StepFactory, UserFactory
from tests.flow.factories import TaskEventFactory
from workflows.models import ConfigChange

DAY = timedelta(days=1)
D = 86400


def change(workflow, at, scope, subject, name, before, after, actor=None):
    return ConfigChange.objects.create(
        workspace_id=workflow.workspace_id,
        workflow=None if scope == "person" else workflow,
        scope=scope,
        subject_id=str(subject),
        name=name,
        field="wip_limit",
        before=before,
        after=after,
        actor=actor,
        at=at,
    )


def build(workflow, owner, now):
    bl = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True, kind="backlog")
    do = StepFactory(workflow=workflow, name="Doing", position=1, wip_limit=4)
    dn = StepFactory(workflow=workflow, name="Done", position=2, kind="done")
    for start, finish in ((-9.5, -8.5), (-8, -7), (-9, -6), (-7, -5), (-4, -3), (-2.5, -1.5), (-2.5, -0.5)):
        created = TaskEventFactory(workflow=workflow, kind="created", to_step_id=do.pk, at=now + start * DAY)
        TaskEventFactory(
            workflow=workflow, task_id=created.task_id, from_step_id=do.pk, to_step_id=dn.pk, at=now + finish * DAY
        )
    f = TaskEventFactory(workflow=workflow, kind="created", to_step_id=bl.pk, at=now - 3 * DAY)
    TaskEventFactory(workflow=workflow, task_id=f.task_id, from_step_id=bl.pk, to_step_id=dn.pk, at=now - DAY / 4)
    pat = UserFactory(username="pat")
    change(workflow, now - 12 * DAY, "step", do.pk, "Doing", 4, 3)  # outside the 10 days
    change(workflow, now - 9 * DAY, "step", do.pk, "Doing", 3, 3)  # a starting row: nothing changed
    change(workflow, now - 8 * DAY, "step", dn.pk, "Done", None, 0)  # a step created: no experiment
    change(workflow, now - 4 * DAY, "step", do.pk, "Doing", 3, 2, actor=owner)
    change(workflow, now - DAY, "step", do.pk, "Doing", 2, 4)
    change(workflow, now - DAY, "person", pat.pk, "pat", 0, 2)
    return do, dn


def side(data):
    p = data["cycle_percentiles"]
    return (
        data["finished"],
        data["throughput_per_day"],
        data["cycle_sample"],
        *(None if p[k] is None else round(p[k] / D, 6) for k in ("50", "85", "95")),
    )


def test_cycle_time_and_throughput_before_and_after_each_change(workflow, owner):
    now = timezone.now()
    do, _ = build(workflow, owner, now)
    data = experiments(workflow, 10, now, BoardSteps.of(workflow))
    first, second = data["experiments"]
    assert (first["at"], first["actor"], first["span_days"]) == (now - 4 * DAY, "olivia", 4)
    assert first["changes"] == [
        {"scope": "step", "subject_id": str(do.pk), "name": "Doing", "field": "wip_limit", "before": 3, "after": 2}
    ]
    assert (first["before"]["from"], first["before"]["to"]) == (now - 8 * DAY, now - 4 * DAY)
    assert side(first["before"]) == (3, 0.75, 3, 2, 2.7, 2.9)  # cycles 1 2 3 days
    assert side(first["after"]) == (4, 1, 3, 1, 1.7, 1.9)  # cycles 1 1 2; F has none
    assert (second["at"], second["actor"], second["span_days"]) == (now - DAY, None, 1)
    assert [(c["scope"], c["name"], c["before"], c["after"]) for c in second["changes"]] == [
        ("step", "Doing", 2, 4),
        ("person", "pat", 0, 2),
    ]
    assert side(second["before"]) == (1, 1, 1, 1, 1, 1)
    assert side(second["after"]) == (2, 2, 1, 2, 2, 2)


def test_no_change_no_experiment(workflow, owner):
    now = timezone.now()
    build(workflow, owner, now)
    assert experiments(workflow, 3, now - 5 * DAY, BoardSteps.of(workflow)) == {"days": 3, "experiments": []}


def url(workflow, **params):
    return f"/api/v1/workflows/{workflow.pk}/flow/experiments/", params


def test_the_api_and_its_csv(api, workflow, owner):
    build(workflow, owner, timezone.now())
    path, _ = url(workflow)
    body = api.get(path, {"days": 10}).json()
    assert body["days"] == 10 and len(body["experiments"]) == 2
    first = body["experiments"][0]
    assert (first["before"]["finished"], first["after"]["finished"]) == (3, 4)
    assert first["before"]["cycle_percentiles"]["50"] == pytest.approx(2 * D)
    assert api.get(path).json()["days"] == 30  # the default
    head, *lines = api.get(path, {"days": 10, "format": "csv"}).content.decode().splitlines()
    assert head.startswith("at,actor,changes,span_days,before_finished,before_throughput_per_day")
    assert head.endswith("after_cycle_p50_seconds,after_cycle_p85_seconds,after_cycle_p95_seconds")
    assert len(lines) == 2 and "step Doing wip_limit 3 -> 2" in lines[0]
    assert "step Doing wip_limit 2 -> 4; person pat wip_limit 0 -> 2" in lines[1]


@pytest.mark.parametrize("days", ["0", "184", "x"])
def test_days_out_of_range_is_a_400(api, workflow, days):
    path, _ = url(workflow)
    response = api.get(path, {"days": days})
    assert response.status_code == 400 and "days" in response.json()["errors"]


def test_an_unknown_parameter_is_a_400(api, workflow):
    path, _ = url(workflow)
    response = api.get(path, {"from": "2024-01-01T00:00:00Z"})
    assert response.status_code == 400 and "from" in response.json()["errors"]


def test_more_than_twenty_change_moments_is_a_400_saying_to_narrow(api, workflow, owner):
    do = StepFactory(workflow=workflow, name="Doing", position=0, wip_limit=1)
    now = timezone.now()
    for n in range(MAX_MOMENTS + 1):
        change(workflow, now - (n + 1) * timedelta(hours=1), "step", do.pk, "Doing", n + 1, n + 2)
    path, _ = url(workflow)
    assert api.get(path, {"days": 1}).status_code == 400
    message = api.get(path, {"days": 1}).json()["errors"]["days"][0]
    assert "more than 20 limit changes" in message and "choose fewer days" in message
    assert api.get(path, {"days": 1, "format": "csv"}).status_code == 400


def test_the_query_count_does_not_grow_with_the_history(api, workflow, owner, django_assert_num_queries):
    now = timezone.now()
    do, dn = build(workflow, owner, now)
    path, _ = url(workflow)
    api.get(path, {"days": 10})  # warm the session and content types
    for more in (1, 30):
        for _ in range(more):
            start = TaskEventFactory(workflow=workflow, kind="created", to_step_id=do.pk, at=now - 2 * DAY)
            TaskEventFactory(
                workflow=workflow, task_id=start.task_id, from_step_id=do.pk, to_step_id=dn.pk, at=now - DAY
            )
        # The workflow, the caller's role, the board's stamp, the steps, the events' count; the
        # change moments, the changes with their actors, the finished tasks.
        with django_assert_num_queries(8):
            assert api.get(path, {"days": 10}).status_code == 200
