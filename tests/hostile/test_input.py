"""Hostile input: each request gets a clear 4xx and leaves nothing behind."""

import json

import pytest

from boards.models import Task, TaskEvent
from tests.conftest import member_client
from tests.factories import MembershipFactory, StepFactory, WorkflowFactory
from workflows.models import Role, Workflow, WorkflowStep


def footprint():
    """Everything a refused request could have left behind."""
    return (
        list(Task.objects.order_by("id").values_list("id", "step_id", "position", "title", "archived_at", "admitted")),
        TaskEvent.objects.count(),
        list(Workflow.objects.order_by("id").values_list("id", "version", "workspace_id")),
        list(WorkflowStep.objects.order_by("id").values_list("id", "wip_limit", "pull_from_step_id", "position")),
    )


@pytest.fixture
def leaves_nothing(db):
    """Call with a function making the hostile request; asserts nothing changed."""

    def check(request):
        before = footprint()
        response = request()
        assert footprint() == before
        return response

    return check


def raw(api, path, body: bytes, content_type="application/json"):
    return api.generic("POST", path, body, content_type=content_type)


def test_oversized_bodies_are_413_with_or_without_a_declared_length(api, board, leaves_nothing):
    backlog, _, _ = board
    body = json.dumps({"step_id": str(backlog.pk), "title": "big", "description": "x" * (1024 * 1024 + 1)}).encode()
    response = leaves_nothing(lambda: raw(api, "/api/v1/tasks/", body))
    assert response.status_code == 413
    assert response.json() == {"code": "too_large", "detail": "The request body is over 1048576 bytes."}


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 5_000 + b"1" + b"}" * 5_000,
        b'{"title": "x", "step_id": ',
        b"\xff\xfe not utf-8",
        b'{"title": NaN}',
    ],
)
def test_malformed_or_deep_json_is_a_400_parse_error(api, board, leaves_nothing, body):
    response = leaves_nothing(lambda: raw(api, "/api/v1/tasks/", body))
    assert response.status_code == 400
    assert response.json()["code"] == "parse_error"


def test_other_media_types_are_415(api, board, leaves_nothing):
    backlog, _, _ = board
    body = f"step_id={backlog.pk}&title=form".encode()
    response = leaves_nothing(lambda: raw(api, "/api/v1/tasks/", body, "application/x-www-form-urlencoded"))
    assert response.status_code == 415
    assert response.json()["code"] == "unsupported_media_type"


@pytest.mark.parametrize(
    "title",
    [
        "Tâche ✓ 任务 🚀",
        "emoji 👩‍💻 zwj",
        "RTL \u202eevil",
        "עברית",
        "𝕏" * 500,
    ],
)
def test_unicode_titles_round_trip_exactly(api, board, title):
    backlog, _, _ = board
    created = api.post("/api/v1/tasks/", {"step_id": str(backlog.pk), "title": title}, format="json")
    assert created.status_code == 201
    assert api.get(f"/api/v1/tasks/{created.json()['id']}/").json()["title"] == title
    board_body = api.get(f"/api/v1/workflows/{backlog.workflow_id}/board/").json()
    assert [t["title"] for step in board_body["steps"] for t in step["tasks"]] == [title]


@pytest.mark.parametrize(
    "field, value",
    [
        ("title", "bell\x07"),
        ("title", "nul\x00byte"),
        ("title", "esc\x1b[31mred"),
        ("title", "line\nbreak"),
        ("title", "x" * 501),
        ("title", "   "),
        ("description", "nul\x00"),
        ("external_ref", "gh:\x00"),
        ("reason", "why\x00"),
        ("priority", "urgent"),
        ("position", -1),
        ("position", 2**40),
        ("position", 10**30),
        ("position", 1.5),
        ("step_id", "not-an-id"),
        ("step_id", ["a"]),
        ("title", {"$gt": ""}),
    ],
)
def test_bad_task_fields_are_400_naming_the_field(api, board, leaves_nothing, field, value):
    backlog, _, _ = board
    body = {"step_id": str(backlog.pk), "title": "ok", field: value}
    response = leaves_nothing(lambda: api.post("/api/v1/tasks/", body, format="json"))
    assert response.status_code == 400
    assert response.json()["code"] == "invalid"
    assert list(response.json()["errors"]) == [field]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"wip_limit": 10**12}, "wip_limit"),
        ({"wip_limit": -1}, "wip_limit"),
        ({"wip_limit": True}, "wip_limit"),
        ({"wip_limit": "3; DROP TABLE"}, "wip_limit"),
        ({"position": -1}, "position"),
        ({"name": "\x00"}, "name"),
        ({"color": "red;}"}, "color"),
        ({"on_full": "explode"}, "on_full"),
    ],
)
def test_bad_step_edits_are_400(api, board, leaves_nothing, body, field):
    _, doing, _ = board
    response = leaves_nothing(lambda: api.patch(f"/api/v1/steps/{doing.pk}/", body, format="json"))
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]


def test_negative_and_huge_move_positions_are_400(api, board, make_task, leaves_nothing):
    backlog, _, done = board
    task = make_task(backlog, "t")
    for position in (-1, -(2**31), 2**40):
        response = leaves_nothing(
            lambda p=position: api.post(
                f"/api/v1/tasks/{task.pk}/move/",
                {"step_id": str(done.pk), "position": p},
                format="json",
            )
        )
        assert response.status_code == 400
        assert list(response.json()["errors"]) == ["position"]


def test_ids_of_other_workspaces_are_refused_without_leaking(api, board, make_task, owner, leaves_nothing):
    backlog, doing, done = board
    mine = make_task(backlog, "mine")
    # A board of a team the owner also belongs to, and one of a team they do not.
    shared = WorkflowFactory()
    MembershipFactory(workspace=shared.workspace, user=owner, role=Role.OWNER)
    shared_step = StepFactory(workflow=shared, name="Theirs", position=0, is_start_step=True)
    foreign = WorkflowFactory()
    foreign_step = StepFactory(workflow=foreign, name="Secret", position=0, is_start_step=True)
    stranger = member_client(foreign.workspace, Role.OWNER)
    foreign_task = stranger.post(
        "/api/v1/tasks/", {"step_id": str(foreign_step.pk), "title": "secret"}, format="json"
    ).json()
    attempts = {
        "move to another board's step": lambda: api.post(
            f"/api/v1/tasks/{mine.pk}/move/", {"step_id": str(shared_step.pk)}, format="json"
        ),
        "move to a foreign step": lambda: api.post(
            f"/api/v1/tasks/{mine.pk}/move/", {"step_id": str(foreign_step.pk)}, format="json"
        ),
        "move a foreign task": lambda: api.post(
            f"/api/v1/tasks/{foreign_task['id']}/move/", {"step_id": str(done.pk)}, format="json"
        ),
        "bulk move a foreign task": lambda: api.post(
            "/api/v1/tasks/bulk-move/",
            {"task_ids": [str(mine.pk), foreign_task["id"]], "step_id": str(done.pk)},
            format="json",
        ),
        "create with a foreign workflow": lambda: api.post(
            "/api/v1/tasks/", {"workflow_id": str(foreign.pk), "title": "x"}, format="json"
        ),
        "create with a mismatched step": lambda: api.post(
            "/api/v1/tasks/",
            {"workflow_id": str(backlog.workflow_id), "step_id": str(shared_step.pk), "title": "x"},
            format="json",
        ),
        "feeder from another board": lambda: api.patch(
            f"/api/v1/steps/{doing.pk}/", {"pull_from_step_id": str(shared_step.pk)}, format="json"
        ),
        "step into a foreign workflow": lambda: api.post(
            "/api/v1/steps/", {"workflow_id": str(foreign.pk), "name": "x"}, format="json"
        ),
        "delete moving tasks to a foreign step": lambda: api.delete(
            f"/api/v1/steps/{backlog.pk}/?move_tasks_to={foreign_step.pk}"
        ),
        "delete moving tasks to another board": lambda: api.delete(
            f"/api/v1/steps/{backlog.pk}/?move_tasks_to={shared_step.pk}"
        ),
        "workflow into a foreign workspace": lambda: api.post(
            "/api/v1/workflows/", {"workspace_id": str(foreign.workspace_id), "name": "x"}, format="json"
        ),
        "read a foreign task's history": lambda: api.get(f"/api/v1/tasks/{foreign_task['id']}/events/"),
    }
    for name, attempt in attempts.items():
        response = leaves_nothing(attempt)
        assert response.status_code in (400, 404), (name, response.status_code)
        assert "secret" not in response.content.decode().lower(), name
        assert "Secret" not in response.content.decode(), name


def test_replayed_requests_change_nothing_twice(api, board, make_task, leaves_nothing):
    backlog, doing, done = board
    body = {"step_id": str(backlog.pk), "title": "from GitHub", "external_ref": "gh:42"}
    assert api.post("/api/v1/tasks/", body, format="json").status_code == 201
    replay = leaves_nothing(lambda: api.post("/api/v1/tasks/", body, format="json"))
    assert replay.status_code == 409
    assert replay.json()["code"] == "external_ref_exists"

    task = make_task(backlog, "t")
    assert api.post(f"/api/v1/tasks/{task.pk}/archive/").status_code == 200
    assert leaves_nothing(lambda: api.post(f"/api/v1/tasks/{task.pk}/archive/")).status_code == 200
    assert api.post(f"/api/v1/tasks/{task.pk}/restore/", {}, format="json").status_code == 200
    again = leaves_nothing(lambda: api.post(f"/api/v1/tasks/{task.pk}/restore/", {}, format="json"))
    assert again.status_code == 200

    bulk = {"task_ids": [str(task.pk)], "step_id": str(done.pk)}
    assert api.post("/api/v1/tasks/bulk-move/", bulk, format="json").status_code == 200
    assert leaves_nothing(lambda: api.post("/api/v1/tasks/bulk-move/", bulk, format="json")).status_code == 200

    assert api.delete(f"/api/v1/tasks/{task.pk}/").status_code == 204
    gone = leaves_nothing(lambda: api.delete(f"/api/v1/tasks/{task.pk}/"))
    assert gone.status_code == 404
    assert TaskEvent.objects.filter(task_id=task.pk, kind="deleted").count() == 1


@pytest.mark.parametrize("per_step", ["\u00b2", "\u0663", " 5", "1_0"])
def test_non_ascii_digits_in_per_step_are_400(api, board, per_step):
    response = api.get(f"/api/v1/workflows/{board[0].workflow_id}/board/", {"per_step": per_step})
    assert response.status_code == 400
    assert response.json()["errors"] == {"per_step": ["A whole number from 1 to 1000."]}
