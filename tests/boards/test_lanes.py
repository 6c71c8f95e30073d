"""Swimlanes: a board's rows, their limits (a lane's over its active steps, a cell's over one
step) at the doors, in the pull, on the board and in live messages; the lanes API."""

import anyio
import pytest

from boards import admission, structure
from boards.models import Task
from boards.snapshots import build_snapshot
from boards.waiting import task_waiting
from common.errors import WipLimitReached
from integrations.mcp_tools import build_server
from tests.conftest import board_state, member_client
from tests.factories import MembershipFactory, StepFactory, WorkflowFactory
from workflows.models import Lane, LaneCell, Role, StepKind, Workflow, WorkflowStep

pytestmark = [pytest.mark.django_db, pytest.mark.sqlite]


@pytest.fixture
def lanes(workflow):
    """The board's first lane (Platform) and a second (Product)."""
    first = workflow.lanes.get()
    first.name = "Platform"
    first.save()
    return first, Lane.objects.create(workflow=workflow, name="Product", position=1)


def titles(step, lane=None):
    tasks = Task.objects.occupying().filter(step=step)
    if lane is not None:
        tasks = tasks.filter(lane=lane)
    return list(tasks.in_board_order().values_list("title", flat=True))


def test_a_new_board_has_one_lane_and_a_task_created_without_a_lane_goes_in_it(api, owner):
    workspace = WorkflowFactory().workspace
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER)
    made = api.post(
        "/api/v1/workflows/", {"workspace_id": str(workspace.pk), "name": "New", "template": "kanban"}, format="json"
    )
    assert made.status_code == 201, made.json()
    workflow = Workflow.objects.get(pk=made.json()["id"])
    (lane,) = workflow.lanes.all()
    created = api.post("/api/v1/tasks/", {"workflow_id": str(workflow.pk), "title": "t"}, format="json")
    assert created.json()["lane_id"] == str(lane.pk)
    board = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()
    assert [entry["name"] for entry in board["lanes"]] == ["Default"]
    assert board["cells"] == []


def test_a_cell_limit_refuses_its_lane_only_and_a_lane_limit_counts_active_steps(board, lanes, make_task):
    backlog, doing, done = board
    platform, product = lanes
    WorkflowStep.objects.filter(pk=doing.pk).update(wip_limit=0, pull_from_step=None)  # only lanes limit it
    doing.refresh_from_db()
    LaneCell.objects.create(lane=platform, step=doing, wip_limit=1)
    make_task(doing, "p1", lane_id=platform.pk)
    before = board_state(doing.workflow)
    with pytest.raises(WipLimitReached) as refused:
        make_task(doing, "p2", lane_id=platform.pk)
    assert refused.value.extra["scope"] == "cell"
    assert refused.value.extra["lane"] == {"id": str(platform.pk), "name": "Platform"}
    assert board_state(doing.workflow) == before
    make_task(doing, "q1", lane_id=product.pk)  # the other lane's cell has no limit
    product.wip_limit = 1
    product.save()
    make_task(done, "q-done", lane_id=product.pk)  # a done step does not count toward the lane
    make_task(backlog, "q-later", lane_id=product.pk)
    with pytest.raises(WipLimitReached) as refused:
        admission.task_move(task=Task.objects.get(title="q-later"), to_step=doing, actor=None)
    assert refused.value.extra["scope"] == "lane"
    assert refused.value.detail == 'Lane "Product" is at its WIP limit (1 of 1).'


def test_the_cell_is_checked_before_the_step_and_the_lane_before_the_group(board, lanes, make_task):
    _, doing, _ = board
    platform, _ = lanes
    LaneCell.objects.create(lane=platform, step=doing, wip_limit=2)
    make_task(doing, "a")
    make_task(doing, "b")  # the step (limit 2) and the cell are both full
    with pytest.raises(WipLimitReached) as refused:
        make_task(doing, "c")
    assert refused.value.extra["scope"] == "cell"


def test_a_move_to_another_lane_in_its_step_is_judged_by_the_cell_and_lane_not_the_step(api, board, lanes, make_task):
    _, doing, _ = board
    platform, product = lanes
    a = make_task(doing, "a")
    make_task(doing, "b")  # the step is full: a lane change inside it still goes
    moved = api.post(
        f"/api/v1/tasks/{a.pk}/move/", {"step_id": str(doing.pk), "lane_id": str(product.pk)}, format="json"
    )
    assert moved.status_code == 200, moved.json()
    assert moved.json()["lane_id"] == str(product.pk)
    LaneCell.objects.create(lane=platform, step=doing, wip_limit=1)
    patched = api.patch(f"/api/v1/tasks/{a.pk}/", {"lane_id": str(platform.pk)}, format="json")
    assert patched.status_code == 409
    assert patched.json()["scope"] == "cell" and patched.json()["step"]["id"] == str(doing.pk)
    assert Task.objects.get(pk=a.pk).lane_id == product.pk
    listed = api.get(f"/api/v1/tasks/?lane={product.pk}").json()["results"]
    assert [task["title"] for task in listed] == ["a"]
    unknown = api.patch(f"/api/v1/tasks/{a.pk}/", {"lane_id": str(WorkflowFactory().lanes.get().pk)}, format="json")
    assert unknown.status_code == 400 and "lane_id" in unknown.json()["errors"]


def test_a_pull_keeps_each_task_in_its_lane_takes_lanes_in_order_and_skips_a_full_lane(board, lanes, make_task):
    backlog, doing, _ = board
    platform, product = lanes
    product.position, platform.position = 0, 1  # Product is the first row now
    product.save()
    platform.save()
    LaneCell.objects.create(lane=product, step=doing, wip_limit=1)
    a = make_task(doing, "a", lane_id=platform.pk)
    make_task(doing, "b", lane_id=platform.pk)
    make_task(backlog, "platform first", lane_id=platform.pk)
    make_task(backlog, "product second", lane_id=product.pk)
    make_task(backlog, "product third", lane_id=product.pk)

    admission.task_move(task=a, to_step=board[2], actor=None)  # room for one: the pull

    assert titles(doing, product) == ["product second"]
    admission.task_move(task=Task.objects.get(title="b"), to_step=board[2], actor=None)
    # Product's cell is full: its third is skipped, Platform's task is taken.
    assert titles(doing) == ["product second", "platform first"]
    assert Task.objects.get(title="product third").step_id == backlog.pk
    assert task_waiting(Task.objects.get(title="product third"))["skipped_because"] == "cell_full"


def test_room_opening_in_a_lane_pulls(board, lanes, make_task):
    backlog, doing, done = board
    platform, _ = lanes
    platform.wip_limit = 1
    platform.save()
    review = StepFactory(workflow=doing.workflow, name="Review", position=3, kind=StepKind.ACTIVE)
    done.position = 4
    done.save()
    in_review = make_task(review, "in review")
    waiting = make_task(backlog, "waiting")
    assert titles(doing) == []  # Platform is full in Review
    detail = task_waiting(waiting)
    assert detail["held_by"][0]["scope"] == "lane" and detail["skipped_because"] == "lane_full"

    admission.task_move(task=in_review, to_step=done, actor=None)

    assert titles(doing) == ["waiting"]


def test_the_expedite_lane_makes_its_tasks_expedite_within_the_allowance(api, board, lanes, make_task):
    backlog, doing, _ = board
    platform, product = lanes
    created = api.post(
        "/api/v1/lanes/",
        {"workflow_id": str(doing.workflow_id), "name": "Expedite", "is_expedite": True},
        format="json",
    )
    assert created.status_code == 201, created.json()
    expedite = created.json()
    assert expedite["position"] == 0  # shown first
    second = api.post(
        "/api/v1/lanes/", {"workflow_id": str(doing.workflow_id), "name": "Again", "is_expedite": True}, format="json"
    )
    assert second.status_code == 400 and "is_expedite" in second.json()["errors"]
    a = make_task(doing, "a")
    b = make_task(backlog, "b")
    moved = api.post(
        f"/api/v1/tasks/{a.pk}/move/", {"step_id": str(doing.pk), "lane_id": expedite["id"]}, format="json"
    )
    assert moved.status_code == 200 and moved.json()["class_of_service"] == "expedite"
    before = board_state(doing.workflow)
    refused = api.post(
        f"/api/v1/tasks/{b.pk}/move/", {"step_id": str(doing.pk), "lane_id": expedite["id"]}, format="json"
    )
    assert refused.status_code == 409 and refused.json()["scope"] == "expedite"
    assert board_state(doing.workflow) == before
    out = api.post(f"/api/v1/tasks/{a.pk}/move/", {"step_id": str(doing.pk), "lane_id": str(product.pk)}, format="json")
    assert out.json()["class_of_service"] == "standard"
    lanes_now = api.get(f"/api/v1/lanes/?workflow={doing.workflow_id}").json()["results"]
    assert [lane["name"] for lane in lanes_now] == ["Expedite", "Platform", "Product"]


def test_the_lanes_api_reads_changes_and_deletes_lanes_and_cells(api, board, lanes, make_task):
    _, doing, done = board
    platform, product = lanes
    make_task(doing, "a", lane_id=product.pk)
    read = api.get(f"/api/v1/lanes/{product.pk}/").json()
    assert read == {
        "id": str(product.pk),
        "workflow_id": str(doing.workflow_id),
        "name": "Product",
        "position": 1,
        "wip_limit": 0,
        "is_expedite": False,
        "occupied": 1,
        "over_limit": False,
    }
    patched = api.patch(f"/api/v1/lanes/{product.pk}/", {"wip_limit": 3, "position": 0}, format="json").json()
    assert (patched["wip_limit"], patched["position"]) == (3, 0)
    put = api.put(
        f"/api/v1/lanes/{product.pk}/cells/",
        [{"step_id": str(doing.pk), "wip_limit": 1}, {"step_id": str(done.pk), "wip_limit": 0}],
        format="json",
    )
    assert put.status_code == 200
    assert put.json() == [{"lane_id": str(product.pk), "step_id": str(doing.pk), "wip_limit": 1, "occupied": 1}]
    bad = api.put(f"/api/v1/lanes/{product.pk}/cells/", [{"step_id": str(doing.pk), "wip_limit": -1}], format="json")
    assert bad.status_code == 400
    board_read = api.get(f"/api/v1/workflows/{doing.workflow_id}/board/").json()
    assert board_read["cells"] == put.json()
    assert [lane["name"] for lane in board_read["lanes"]] == ["Product", "Platform"]
    not_empty = api.delete(f"/api/v1/lanes/{product.pk}/")
    assert not_empty.status_code == 409
    gone = api.delete(f"/api/v1/lanes/{product.pk}/?move_tasks_to={platform.pk}")
    assert gone.status_code == 204
    assert Task.objects.get(title="a").lane_id == platform.pk
    last = api.delete(f"/api/v1/lanes/{platform.pk}/")
    assert last.status_code == 400
    outsider = member_client(WorkflowFactory().workspace, Role.OWNER)
    assert outsider.get(f"/api/v1/lanes/{platform.pk}/").status_code == 404
    viewer = member_client(doing.workflow.workspace, Role.VIEWER)
    assert viewer.patch(f"/api/v1/lanes/{platform.pk}/", {"name": "x"}, format="json").status_code == 403


def test_deleting_a_lane_moves_its_tasks_admitted_like_any_move_or_not_at_all(board, lanes, make_task, owner):
    _, doing, _ = board
    platform, product = lanes
    make_task(doing, "p", lane_id=platform.pk)
    make_task(doing, "q", lane_id=product.pk)
    LaneCell.objects.create(lane=platform, step=doing, wip_limit=1)
    before = board_state(doing.workflow)
    with pytest.raises(WipLimitReached):
        structure.lane_delete(lane=product, actor=owner, move_tasks_to=platform.pk)
    assert board_state(doing.workflow) == before and Lane.objects.filter(pk=product.pk).exists()


def test_the_board_and_live_messages_carry_lane_and_cell_counts(board, lanes, make_task):
    backlog, doing, _ = board
    platform, product = lanes
    product.wip_limit = 2
    product.save()
    LaneCell.objects.create(lane=product, step=doing, wip_limit=1)
    make_task(doing, "q", lane_id=product.pk)
    make_task(board[2], "p", lane_id=platform.pk)  # done: it counts toward no lane
    snapshot = build_snapshot(workflow=Workflow.objects.get(pk=doing.workflow_id))
    by_id = {lane["id"]: lane for lane in snapshot["lanes"]}
    assert by_id[str(product.pk)]["occupied"] == 1 and by_id[str(platform.pk)]["occupied"] == 0
    assert snapshot["cells"] == [{"lane_id": str(product.pk), "step_id": str(doing.pk), "wip_limit": 1, "occupied": 1}]


@pytest.mark.django_db(transaction=True)  # the sync tools run in a worker thread: this test commits
def test_the_mcp_tools_list_create_and_change_lanes_and_move_a_task_to_one(board, lanes, make_task, owner):
    _, doing, _ = board
    platform, product = lanes
    server = build_server(user_id=owner.pk)

    def call(tool, **arguments):
        return anyio.run(server.call_tool, tool, arguments).structured_content

    listed = call("list_lanes", workflow_id=str(doing.workflow_id))["result"]
    assert [lane["name"] for lane in listed] == ["Platform", "Product"]
    made = call("create_lane", workflow_id=str(doing.workflow_id), name="Ops", wip_limit=1)
    assert (made["name"], made["position"], made["wip_limit"]) == ("Ops", 2, 1)
    changed = call("update_lane", lane_id=made["id"], name="Operations", position=0)
    assert (changed["name"], changed["position"]) == ("Operations", 0)
    task = make_task(doing, "a")
    moved = call("move_task", task_id=str(task.pk), step_id=str(doing.pk), lane_id=made["id"])
    assert moved["lane_id"] == made["id"]
    created = call("create_task", step_id=str(doing.pk), title="b", lane_id=made["id"])
    assert created["scope"] == "lane"  # Operations holds its one task in progress: a tool error
