"""Step groups through the REST API: create, read, change
and delete a limit shared by several steps, with the rules of workflows/step_rules.py."""

import pytest

from tests.conftest import member_client
from tests.factories import StepFactory, WorkflowFactory
from workflows.models import Role, StepGroup, Workflow, WorkflowStep


@pytest.fixture
def steps(board):
    """Backlog -> In Progress (limit 2) -> Done, plus Review (position 3)."""
    backlog, doing, done = board
    return backlog, doing, done, StepFactory(workflow=backlog.workflow, name="Review", position=3)


def create(client, workflow, **overrides):
    body = {"workflow_id": str(workflow.pk), "name": "Development", "wip_limit": 3, **overrides}
    return client.post("/api/v1/step-groups/", body, format="json")


def version(workflow) -> int:
    return Workflow.objects.get(pk=workflow.pk).version


def test_create_read_change_and_delete_a_group(api, steps, make_task):
    backlog, doing, done, review = steps
    workflow = backlog.workflow
    make_task(doing, "a")
    before = version(workflow)

    created = create(api, workflow, step_ids=[str(review.pk), str(doing.pk)])

    assert created.status_code == 201, created.json()
    group = created.json()
    assert group == {
        "id": group["id"],
        "workflow_id": str(workflow.pk),
        "name": "Development",
        "wip_limit": 3,
        "step_ids": [str(doing.pk), str(review.pk)],  # in board order
        "occupied": 1,
        "over_limit": False,
    }
    assert version(workflow) == before + 1
    assert api.get(f"/api/v1/step-groups/{group['id']}/").json() == group
    listed = api.get(f"/api/v1/step-groups/?workflow={workflow.pk}").json()
    assert listed["results"] == [group]
    assert api.get(f"/api/v1/steps/{doing.pk}/").json()["group_id"] == group["id"]

    url = f"/api/v1/step-groups/{group['id']}/"
    changed = api.patch(url, {"wip_limit": 1, "step_ids": [str(doing.pk), str(done.pk)]}, format="json")

    assert changed.status_code == 200, changed.json()
    assert (changed.json()["wip_limit"], changed.json()["step_ids"]) == (1, [str(doing.pk), str(done.pk)])
    assert changed.json()["over_limit"] is False  # 1 of 1
    assert WorkflowStep.objects.get(pk=review.pk).group_id is None  # left the group

    assert api.delete(f"/api/v1/step-groups/{group['id']}/").status_code == 204
    assert not StepGroup.objects.filter(pk=group["id"]).exists()
    assert not WorkflowStep.objects.filter(workflow=workflow, group__isnull=False).exists()
    assert api.get(f"/api/v1/step-groups/{group['id']}/").status_code == 404
    assert version(workflow) == before + 3


def test_a_group_over_a_busier_board_shows_over_limit(api, steps, make_task, owner):
    _, doing, _, review = steps
    for title in ("a", "b"):
        make_task(doing, title)
    make_task(review, "c")

    created = create(api, doing.workflow, wip_limit=2, step_ids=[str(doing.pk), str(review.pk)])

    assert created.status_code == 201
    assert (created.json()["occupied"], created.json()["over_limit"]) == (3, True)


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        ({"wip_limit": 0}, "wip_limit", "Use 1 or more."),
        ({"wip_limit": 100_001}, "wip_limit", "Use 100000 or less."),
        ({"name": ""}, "name", "Please fill this in."),
        ({"step_ids": "one"}, "step_ids", "Please give a list."),
    ],
)
def test_the_fields_are_bounded(api, steps, overrides, field, message):
    backlog, doing, _, _ = steps
    body = {"step_ids": [str(backlog.pk), str(doing.pk)], **overrides}

    response = create(api, backlog.workflow, **body)

    assert response.status_code == 400
    assert response.json()["errors"][field] == [message]


def test_a_group_needs_two_different_steps_of_its_workflow_none_in_another_group(api, steps):
    backlog, doing, done, review = steps
    workflow = backlog.workflow
    foreign = StepFactory(name="Elsewhere")
    assert create(api, workflow, name="Taken", step_ids=[str(done.pk), str(review.pk)]).status_code == 201
    before = version(workflow)

    cases = {
        "one": ([str(doing.pk)], "Choose at least 2."),
        "twice": ([str(doing.pk), str(doing.pk)], "Each step is named once."),
        "foreign": ([str(doing.pk), str(foreign.pk)], "Every step must be a step of this workflow."),
        "taken": ([str(doing.pk), str(review.pk)], 'Step "Review" is already in group "Taken".'),
    }
    for name, (step_ids, message) in cases.items():
        response = create(api, workflow, step_ids=step_ids)
        assert response.status_code == 400, name
        assert response.json()["errors"] == {"step_ids": [message]}, name
    assert version(workflow) == before  # nothing changed, not even the version
    assert StepGroup.objects.filter(workflow=workflow).count() == 1


def test_a_group_keeps_its_own_steps_when_changed(api, steps):
    backlog, doing, done, _ = steps
    group = create(api, backlog.workflow, step_ids=[str(backlog.pk), str(doing.pk)]).json()

    response = api.patch(
        f"/api/v1/step-groups/{group['id']}/",
        {"step_ids": [str(backlog.pk), str(doing.pk), str(done.pk)], "name": "Everything"},
        format="json",
    )

    assert response.status_code == 200, response.json()
    assert response.json()["name"] == "Everything"
    assert len(response.json()["step_ids"]) == 3


def test_members_write_viewers_read_non_members_see_nothing(api, steps):
    backlog, doing, done, review = steps
    workflow = backlog.workflow
    group = create(api, workflow, step_ids=[str(backlog.pk), str(doing.pk)]).json()
    url = f"/api/v1/step-groups/{group['id']}/"
    viewer = member_client(workflow.workspace, Role.VIEWER)
    member = member_client(workflow.workspace, Role.MEMBER)
    outsider = member_client(WorkflowFactory().workspace, Role.OWNER)
    pair = [str(done.pk), str(review.pk)]

    assert viewer.get(url).status_code == 200
    assert viewer.patch(url, {"wip_limit": 9}, format="json").status_code == 403
    assert viewer.delete(url).status_code == 403
    assert create(viewer, workflow, step_ids=pair).status_code == 403

    assert outsider.get(url).status_code == 404
    assert outsider.patch(url, {"wip_limit": 9}, format="json").status_code == 404
    assert outsider.delete(url).status_code == 404
    assert outsider.get(f"/api/v1/step-groups/?workflow={workflow.pk}").json()["results"] == []
    refused = create(outsider, workflow, step_ids=pair)  # a body's workflow: like steps, a 400 on the field
    assert (refused.status_code, refused.json()["errors"]) == (400, {"workflow_id": ["No such workflow."]})
    assert StepGroup.objects.get(pk=group["id"]).wip_limit == 3

    assert member.patch(url, {"wip_limit": 9}, format="json").json()["wip_limit"] == 9
    assert create(member, workflow, name="Finish", step_ids=pair).status_code == 201
    assert member.delete(url).status_code == 204
    assert api.get("/api/v1/step-groups/not-an-id/").status_code == 404


def test_the_board_carries_the_groups_and_each_steps_kind_and_group(api, steps, make_task):
    backlog, doing, done, review = steps
    make_task(doing, "a")
    make_task(review, "b")
    group = create(api, backlog.workflow, step_ids=[str(doing.pk), str(review.pk)]).json()

    board = api.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").json()

    assert board["groups"] == [group]
    assert group["occupied"] == 2
    assert [(s["name"], s["kind"], s["group_id"]) for s in board["steps"]] == [
        ("Backlog", "backlog", None),
        ("In Progress", "active", group["id"]),
        ("Done", "done", None),
        ("Review", "active", group["id"]),
    ]


def test_deleting_a_step_leaves_its_group_and_a_group_left_with_one_step_goes(api, steps):
    backlog, doing, done, _ = steps
    group = create(api, backlog.workflow, step_ids=[str(backlog.pk), str(doing.pk), str(done.pk)]).json()

    assert api.delete(f"/api/v1/steps/{backlog.pk}/").status_code == 204
    assert api.get(f"/api/v1/step-groups/{group['id']}/").json()["step_ids"] == [str(doing.pk), str(done.pk)]
    assert api.delete(f"/api/v1/steps/{doing.pk}/").status_code == 204

    assert not StepGroup.objects.filter(pk=group["id"]).exists()  # one step is no group
    assert WorkflowStep.objects.get(pk=done.pk).group_id is None
