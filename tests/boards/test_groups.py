"""Step groups at the doors: a limit shared by several steps refuses entry
from outside the group with its own 409 body, never judges a move inside the group, and
fills its steps when it gains room. Also run on SQLite (bin/test)."""

import pytest

from boards import admission, structure
from boards.changes import reconcile_all
from boards.models import Task
from common.errors import WipLimitReached
from tests.conftest import board_state
from tests.factories import StepFactory, development_board
from workflows.models import OnFull, StepGroup, Workflow


@pytest.fixture
def grouped(workflow, owner):
    return development_board(workflow)


def titles(step):
    return list(Task.objects.occupying().filter(step=step).in_board_order().values_list("title", flat=True))


def group_refusal(group, step, limit, occupied):
    return {
        "code": "wip_limit_reached",
        "scope": "group",
        "group": {"id": str(group.pk), "name": "Development"},
        "step": {"id": str(step.pk), "name": step.name},
        "limit": limit,
        "occupied": occupied,
        "detail": f'Group "Development" is at its WIP limit ({occupied} of {limit}).',
    }


def test_a_create_into_a_full_group_is_refused_naming_the_group_and_persists_nothing(api, grouped, make_task):
    _, build, review, _, group = grouped
    make_task(build, "a")
    make_task(review, "b")  # the group is full, though Build has no limit of its own
    before = board_state(build.workflow)

    response = api.post("/api/v1/tasks/", {"step_id": str(build.pk), "title": "c"}, format="json")

    assert response.status_code == 409
    assert response.json() == group_refusal(group, build, 2, 2)
    assert board_state(build.workflow) == before


def test_a_move_into_a_full_group_from_outside_is_refused_and_the_task_stays(api, grouped, make_task, owner):
    backlog, build, review, done, group = grouped
    make_task(build, "a")
    make_task(review, "b")
    waiting = make_task(done, "c")  # Done does not feed the group: nothing pulls it

    response = api.post(f"/api/v1/tasks/{waiting.pk}/move/", {"step_id": str(review.pk)}, format="json")

    assert response.status_code == 409
    assert response.json() == group_refusal(group, review, 2, 2)
    assert titles(done) == ["c"]


def test_a_move_inside_the_group_is_judged_by_the_target_step_alone(grouped, make_task, owner):
    _, build, review, _, _ = grouped
    first, second = make_task(build, "a"), make_task(build, "b")  # the group is full

    admission.task_move(task=first, to_step=review, actor=owner)
    admission.task_move(task=second, to_step=review, actor=owner)
    admission.task_move(task=first, to_step=build, actor=owner)

    assert (titles(build), titles(review)) == (["a"], ["b"])
    forced = make_task(build, "c", force=True, reason="hotfix")  # the group is over its limit
    admission.task_move(task=first, to_step=review, actor=owner)  # Review has room of its own
    with pytest.raises(WipLimitReached) as refused:
        admission.task_move(task=forced, to_step=review, actor=owner)
    assert refused.value.as_body()["scope"] == "step"  # Review's own limit, not the group's
    assert (titles(build), titles(review)) == (["c"], ["b", "a"])


def test_a_queued_task_moving_inside_the_group_needs_room_in_the_group(api, grouped, make_task, owner):
    """It holds no place in the group yet: admitting it would take one."""
    _, build, review, _, group = grouped
    structure.step_update(step=build, actor=owner, on_full=OnFull.QUEUE)
    make_task(build, "a")
    make_task(review, "b")
    queued = make_task(build, "c")
    assert not queued.admitted

    response = api.post(f"/api/v1/tasks/{queued.pk}/move/", {"step_id": str(review.pk)}, format="json")

    assert response.status_code == 409
    assert response.json() == group_refusal(group, review, 2, 2)
    assert Task.objects.get(pk=queued.pk).step_id == build.pk


def test_a_task_leaving_the_group_lets_its_steps_pull(grouped, make_task, owner):
    backlog, build, review, done, _ = grouped
    make_task(build, "a")
    leaving = make_task(review, "b")
    make_task(backlog, "next")  # waits: the group is full

    admission.task_move(task=leaving, to_step=done, actor=owner)

    assert titles(build) == ["a", "next"]
    assert titles(backlog) == []


def test_raising_the_group_limit_pulls_and_the_message_carries_the_group(grouped, make_task, owner, broadcasts):
    backlog, build, review, _, group = grouped
    make_task(build, "a")
    make_task(review, "b")
    make_task(backlog, "next")
    make_task(backlog, "later")

    (message,) = broadcasts(
        build.workflow, lambda: structure.group_update(group=group, actor=owner, wip_limit=3, name="Dev")
    )

    assert titles(build) == ["a", "next"] and titles(backlog) == ["later"]
    assert message["type"] == "group.updated"
    assert message["group"] == {
        "id": str(group.pk),
        "workflow_id": str(build.workflow_id),
        "name": "Dev",
        "wip_limit": 3,
        "step_ids": [str(build.pk), str(review.pk)],
        "occupied": 3,
        "over_limit": False,
    }
    assert message["groups"] == [message["group"]]
    steps = {s["id"]: s for s in message["steps"]}
    assert {(s["name"], s["group_id"], s["occupied"]) for s in steps.values()} == {
        ("Backlog", None, 1),
        ("Build", str(group.pk), 2),
        ("Review", str(group.pk), 1),
    }
    assert [t["title"] for t in message["tasks"]] == ["next"]
    assert message["version"] == Workflow.objects.get(pk=build.workflow_id).version


def test_creating_a_group_over_unlimited_steps_makes_them_pull(workflow, owner, make_task, broadcasts):
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    build = StepFactory(workflow=workflow, name="Build", position=1, pull_from_step=backlog)
    test = StepFactory(workflow=workflow, name="Test", position=2)
    for title in ("a", "b", "c"):
        make_task(backlog, title)

    (message,) = broadcasts(
        workflow,
        lambda: structure.group_create(
            workflow=workflow, actor=owner, name="Development", wip_limit=2, step_ids=[build.pk, test.pk]
        ),
    )

    assert titles(build) == ["a", "b"] and titles(backlog) == ["c"]
    assert message["type"] == "group.updated"
    assert (message["group"]["name"], message["group"]["occupied"]) == ("Development", 2)


def test_deleting_a_group_frees_its_steps_and_says_so(grouped, make_task, owner, broadcasts):
    backlog, build, review, _, group = grouped
    make_task(build, "a")
    make_task(review, "b")
    make_task(backlog, "next")  # Build, free of the group and without a limit, no longer pulls

    (message,) = broadcasts(build.workflow, lambda: structure.group_delete(group=group, actor=owner))

    assert not StepGroup.objects.filter(pk=group.pk).exists()
    assert message["type"] == "group.deleted"
    assert message["group"] == {"id": str(group.pk), "name": "Development"}
    assert message["deleted_group_ids"] == [str(group.pk)]
    assert "groups" not in message
    assert {(s["name"], s["group_id"]) for s in message["steps"]} == {("Build", None), ("Review", None)}
    assert titles(backlog) == ["next"]


def test_a_move_into_a_grouped_step_carries_the_groups_occupancy(grouped, make_task, owner, broadcasts):
    _, build, review, done, group = grouped
    task = make_task(done, "a")

    (message,) = broadcasts(build.workflow, lambda: admission.task_move(task=task, to_step=review, actor=owner))

    assert message["groups"] == [
        {
            "id": str(group.pk),
            "workflow_id": str(build.workflow_id),
            "name": "Development",
            "wip_limit": 2,
            "step_ids": [str(build.pk), str(review.pk)],
            "occupied": 1,
            "over_limit": False,
        }
    ]


def test_a_board_without_groups_sends_no_group_entries(board, make_task, owner, broadcasts):
    backlog, _, done = board
    task = make_task(done, "a")

    (message,) = broadcasts(backlog.workflow, lambda: admission.task_move(task=task, to_step=backlog, actor=owner))

    assert "groups" not in message and "deleted_group_ids" not in message


def test_deleting_a_step_that_leaves_its_group_with_one_step_dissolves_it(grouped, owner, broadcasts):
    _, build, review, _, group = grouped

    (message,) = broadcasts(build.workflow, lambda: structure.step_delete(step=build, actor=owner))

    assert not StepGroup.objects.filter(pk=group.pk).exists()
    assert message["type"] == "step.deleted"
    assert message["deleted_group_ids"] == [str(group.pk)]
    assert [(s["name"], s["group_id"]) for s in message["steps"] if s["id"] == str(review.pk)] == [("Review", None)]
    assert "groups" not in message


def test_the_reconciler_fills_a_group_that_has_room(grouped, make_task):
    """A board whose only limit is a group's is reconciled too."""
    backlog, build, review, _, _ = grouped
    structure.step_update(step=review, actor=None, wip_limit=0)
    make_task(build, "a")
    make_task(review, "b")
    make_task(backlog, "waiting")
    # Room opened behind the service's back (as after a crash between commit and pull).
    Task.objects.filter(title="a").delete()

    assert reconcile_all() == 1
    assert titles(build) == ["waiting"]
    assert reconcile_all() == 0
