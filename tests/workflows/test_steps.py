"""Step configuration rules through the REST API."""

from boards.models import Task
from workflows.models import Workflow, WorkflowStep


def steps_of(workflow):
    return list(WorkflowStep.objects.filter(workflow=workflow).order_by("position").values_list("name", flat=True))


def test_create_a_step_at_a_position_renumbers_the_others(api, board):
    backlog, _, _ = board
    response = api.post(
        "/api/v1/steps/",
        {
            "workflow_id": str(backlog.workflow_id),
            "name": "Ready",
            "position": 1,
            "wip_limit": 3,
            "pull_from_step_id": str(backlog.pk),
            "on_full": "queue",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert {k: body[k] for k in ("name", "position", "wip_limit", "pull_from_step_id", "on_full", "occupied")} == {
        "name": "Ready",
        "position": 1,
        "wip_limit": 3,
        "pull_from_step_id": str(backlog.pk),
        "on_full": "queue",
        "occupied": 0,
    }
    assert steps_of(backlog.workflow) == ["Backlog", "Ready", "In Progress", "Done"]


def test_reorder_steps(api, board):
    backlog, _, done = board
    assert api.patch(f"/api/v1/steps/{done.pk}/", {"position": 0}, format="json").status_code == 200
    assert steps_of(backlog.workflow) == ["Done", "Backlog", "In Progress"]


def test_a_feeder_from_another_workflow_is_refused(api, board, owner):
    from tests.factories import StepFactory

    _, doing, _ = board
    foreign = StepFactory(name="Foreign")
    response = api.patch(f"/api/v1/steps/{doing.pk}/", {"pull_from_step_id": str(foreign.pk)}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"]["pull_from_step_id"] == ["Must be a step of the same workflow."]


def test_unknown_event_actions_are_refused(api, board):
    _, doing, _ = board
    response = api.patch(f"/api/v1/steps/{doing.pk}/", {"events": {"on_enter": [{"type": "launch"}]}}, format="json")
    assert response.status_code == 400
    assert "events" in response.json()["errors"]


def test_deleting_a_step_with_live_tasks_needs_a_target(api, board, make_task):
    backlog, doing, done = board
    make_task(doing, "x")
    make_task(doing, "y")
    make_task(backlog, "a")  # In Progress is full: it stays
    refused = api.delete(f"/api/v1/steps/{backlog.pk}/")
    assert refused.status_code == 409
    assert refused.json()["code"] == "step_not_empty"
    assert WorkflowStep.objects.filter(pk=backlog.pk).exists()
    moved = api.delete(f"/api/v1/steps/{backlog.pk}/?move_tasks_to={done.pk}")
    assert moved.status_code == 204
    assert Task.objects.get(title="a").step == done
    doing.refresh_from_db()
    assert doing.pull_from_step is None  # deleting a step clears the feeders that pointed at it
    assert steps_of(backlog.workflow) == ["In Progress", "Done"]
    assert WorkflowStep.objects.get(pk=doing.pk).is_start_step  # the start step moved on


def test_moving_tasks_out_of_a_deleted_step_respects_the_target_limit(api, board, make_task):
    backlog, doing, _ = board
    make_task(doing, "c")
    for title in ("a", "b", "d"):  # In Progress pulls "a" and is full
        make_task(backlog, title)
    refused = api.delete(f"/api/v1/steps/{backlog.pk}/?move_tasks_to={doing.pk}")
    assert refused.status_code == 409
    assert refused.json()["code"] == "wip_limit_reached"
    assert Task.objects.filter(step=backlog).count() == 2


def test_every_committed_change_bumps_the_version_once(api, board, make_task):
    backlog, doing, _ = board
    version = Workflow.objects.get(pk=backlog.workflow_id).version
    make_task(backlog, "a")  # and In Progress pulls it: one change
    api.patch(f"/api/v1/steps/{doing.pk}/", {"wip_limit": 3}, format="json")
    api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "x", "priority": "bogus"}, format="json")  # 400
    assert Workflow.objects.get(pk=backlog.workflow_id).version == version + 2


def test_templates_build_their_steps(api, workflow):
    response = api.post(
        "/api/v1/workflows/",
        {"workspace_id": str(workflow.workspace_id), "name": "Reviews", "template": "pr_review"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    created = Workflow.objects.get(pk=response.json()["id"])
    steps = list(created.steps.order_by("position"))
    assert [s.name for s in steps] == ["Waiting", "Review", "Done"]
    assert steps[1].pull_from_step == steps[0] and steps[1].wip_limit == 2
    assert steps[0].is_start_step
    unknown = api.post(
        "/api/v1/workflows/",
        {"workspace_id": str(workflow.workspace_id), "name": "X", "template": "nope"},
        format="json",
    )
    assert unknown.status_code == 400
