"""Every door x every limit: where a limit applies, the door refuses
with that limit's `scope` and nothing of the request persists; the step-event engine and
review watches defer instead (the task stays, or is offered again); pulls and promotions skip
and never refuse. The refusal counter `kandev_admissions_rejected_total{scope}` tells which
limit refused at doors whose answer carries no body (a review watch).

Import is no door here: a workflow import creates steps, never tasks, so it admits nothing.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import anyio
import pytest
from django.test import Client
from prometheus_client import REGISTRY
from rest_framework.test import APIClient

from agents.models import AgentSession
from boards import admission
from boards.changes import reconcile_board
from boards.models import EventKind, Task, TaskEvent
from integrations.intake import intake_create, signature_for
from integrations.mcp_tools import build_server
from integrations.watch import poll_watch, watch_create
from tests.conftest import board_state
from tests.factories import MembershipFactory, StepFactory, UserFactory
from tests.integrations.fake_github import FakeGitHub
from workflows.models import LaneCell, OnFull, Role, StepGroup, StepKind, WorkflowStep

NEXT = {"on_enter": [{"type": "move_to_next"}], "on_turn_complete": [], "on_exit": []}


class Answer(NamedTuple):
    code: object  # an HTTP status, "tool error", "deferred" or "skipped"
    body: dict | None  # the refusal as the door tells it (None: the door tells none)


@dataclass
class Limited:
    """The `board` fixture with one limit `fill()`ed for the task a door brings into In
    Progress (`target`): its own limit, its group's, its assignee alice's, its lane's in In
    Progress (the cell) or its lane's."""

    scope: str
    backlog: WorkflowStep
    target: WorkflowStep
    fill: Callable[[], None]
    refusal: dict  # what every refusal of the door's task says
    task: dict  # what the door's task carries (its assignee)
    make: Callable
    owner: object
    request: pytest.FixtureRequest

    @property
    def workflow(self):
        return self.target.workflow

    def api(self) -> APIClient:
        client = APIClient()
        client.force_authenticate(self.owner)
        return client

    def waiting(self, title="waiting") -> Task:
        """The door's task in Backlog, where it counts toward no limit."""
        return self.make(self.backlog, title, **self.task)


def named(obj) -> dict:
    return {"id": str(obj.pk), "name": obj.name}


def step_full(board, owner, make_task, request) -> Limited:
    backlog, doing, _ = board

    def fill():
        make_task(doing, "one")
        make_task(doing, "two")

    refusal = {"scope": "step", "step": named(doing), "limit": 2, "occupied": 2}
    return Limited("step", backlog, doing, fill, refusal, {}, make_task, owner, request)


def group_full(board, owner, make_task, request) -> Limited:
    """In Progress has no limit of its own; its group "Development" (with Review) holds 2."""
    backlog, doing, _ = board
    review = StepFactory(workflow=doing.workflow, name="Review", position=3)
    group = StepGroup.objects.create(workflow=doing.workflow, name="Development", wip_limit=2)
    WorkflowStep.objects.filter(pk__in=[doing.pk, review.pk]).update(group=group, wip_limit=0)
    doing.refresh_from_db()

    def fill():
        make_task(review, "one")
        make_task(review, "two")

    refusal = {"scope": "group", "group": named(group), "step": named(doing), "limit": 2, "occupied": 2}
    return Limited("group", backlog, doing, fill, refusal, {}, make_task, owner, request)


def person_full(board, owner, make_task, request) -> Limited:
    """alice may hold one task in active steps; In Progress has room for two."""
    backlog, doing, _ = board
    alice = UserFactory(username="alice")
    MembershipFactory(workspace=doing.workflow.workspace, user=alice, role=Role.MEMBER, wip_limit=1)

    def fill():
        make_task(doing, "alice's", assignee_id=alice.pk)

    refusal = {"scope": "person", "assignee": {"id": alice.pk, "username": "alice"}, "limit": 1, "occupied": 1}
    return Limited("person", backlog, doing, fill, refusal, {"assignee_id": alice.pk}, make_task, owner, request)


def expedite_full(board, owner, make_task, request) -> Limited:
    """The board's one expedite task (expedite_limit 1) is in progress."""
    backlog, doing, _ = board

    def fill():
        make_task(doing, "urgent", class_of_service="expedite")

    refusal = {"scope": "expedite", "limit": 1, "occupied": 1}
    return Limited("expedite", backlog, doing, fill, refusal, {}, make_task, owner, request)


def cell_full(board, owner, make_task, request) -> Limited:
    """The board's lane may hold one task in In Progress (which has room for two)."""
    backlog, doing, _ = board
    lane = doing.workflow.lanes.get()
    LaneCell.objects.create(lane=lane, step=doing, wip_limit=1)

    def fill():
        make_task(doing, "one")

    refusal = {"scope": "cell", "lane": named(lane), "step": named(doing), "limit": 1, "occupied": 1}
    return Limited("cell", backlog, doing, fill, refusal, {}, make_task, owner, request)


def lane_full(board, owner, make_task, request) -> Limited:
    """The board's lane may hold one task in its active steps: it is in Review."""
    backlog, doing, _ = board
    review = StepFactory(workflow=doing.workflow, name="Review", position=3, kind=StepKind.ACTIVE)
    lane = doing.workflow.lanes.get()
    lane.wip_limit = 1
    lane.save()

    def fill():
        make_task(review, "one")

    refusal = {"scope": "lane", "lane": named(lane), "limit": 1, "occupied": 1}
    return Limited("lane", backlog, doing, fill, refusal, {}, make_task, owner, request)


SCOPES = {
    "step": step_full,
    "group": group_full,
    "person": person_full,
    "expedite": expedite_full,
    "cell": cell_full,
    "lane": lane_full,
}


# --- the doors: each prepares its case on a Limited board and returns the request -------


def rest(response) -> Answer:
    return Answer(response.status_code, response.json())


def rest_create(limited: Limited):
    limited.fill()
    body = {"step_id": str(limited.target.pk), "title": "new", **limited.task}
    return lambda: rest(limited.api().post("/api/v1/tasks/", body, format="json"))


def rest_move(limited: Limited):
    limited.fill()
    task = limited.waiting()
    body = {"step_id": str(limited.target.pk)}
    return lambda: rest(limited.api().post(f"/api/v1/tasks/{task.pk}/move/", body, format="json"))


def rest_bulk_move(limited: Limited):
    limited.fill()
    body = {"task_ids": [str(limited.waiting().pk)], "step_id": str(limited.target.pk)}
    return lambda: rest(limited.api().post("/api/v1/tasks/bulk-move/", body, format="json"))


def rest_restore(limited: Limited):
    task = limited.make(limited.target, "archived", **limited.task)  # while there is room
    admission.task_archive(task=task, actor=limited.owner)
    limited.fill()
    return lambda: rest(limited.api().post(f"/api/v1/tasks/{task.pk}/restore/", {}, format="json"))


def rest_make_permanent(limited: Limited):
    limited.fill()
    task = limited.make(limited.target, "ephemeral", is_ephemeral=True, **limited.task)
    return lambda: rest(limited.api().post(f"/api/v1/tasks/{task.pk}/make-permanent/", {}, format="json"))


def rest_patch_assignee(limited: Limited):
    limited.fill()
    task = limited.make(limited.target, "unassigned")
    return lambda: rest(limited.api().patch(f"/api/v1/tasks/{task.pk}/", limited.task, format="json"))


def rest_patch_class(limited: Limited):
    limited.fill()
    task = limited.make(limited.target, "standard")
    body = {"class_of_service": "expedite"}
    return lambda: rest(limited.api().patch(f"/api/v1/tasks/{task.pk}/", body, format="json"))


def engine_move(limited: Limited):
    """Backlog's on_enter moves each new task on to In Progress: refused, it stays in Backlog."""
    WorkflowStep.objects.filter(pk=limited.backlog.pk).update(events=NEXT)
    limited.fill()

    def create():
        created = limited.api().post(
            "/api/v1/tasks/", {"step_id": str(limited.backlog.pk), "title": "new", **limited.task}, format="json"
        )
        task = Task.objects.get(pk=created.json()["id"])
        deferred = TaskEvent.objects.get(task_id=task.pk, kind=EventKind.DEFERRED)
        assert (created.status_code, task.step_id) == (201, limited.backlog.pk)
        return Answer("deferred", deferred.detail["refusal"])

    return create


def webhook(limited: Limited):
    intake, secret = intake_create(workflow=limited.workflow, step=limited.target, actor=limited.owner)
    limited.fill()
    payload = b'{"title": "from a sender", "external_ref": "ext-1"}'
    headers = {"X-Hub-Signature-256": signature_for(secret, payload)}
    return lambda: rest(
        Client().post(f"/hooks/{intake.pk}/", payload, content_type="application/json", headers=headers)
    )


def review_watch(limited: Limited):
    limited.request.getfixturevalue("settings").KANDEV_OUTBOUND_ALLOW = ["127.0.0.1"]
    github = limited.request.getfixturevalue("github")
    github.open_pull("acme/api", 1, "Fix login")
    watch = watch_create(
        workflow=limited.workflow,
        step=limited.target,
        actor=None,
        repositories=["acme/api"],
        reviewer_login="rita",
        token=github.token,
        api_base_url=github.base_url,
    )
    limited.fill()

    def poll():
        report = poll_watch(watch=watch)
        assert (report.admitted, report.deferred, report.error) == ([], ["github:acme/api#1"], "")
        return Answer("deferred", None)

    return poll


def mcp(tool: str, arguments: Callable[[], dict]):
    """The tool, called in this process on the server the MCP transports serve (its sync tools
    run in a worker thread: these cases commit, `transaction=True`)."""

    def door(limited: Limited):
        server = build_server(user_id=limited.owner.pk)
        limited.fill()
        args = arguments(limited)

        def call():
            result = anyio.run(server.call_tool, tool, args)
            assert result.is_error and result.content[0].text == result.structured_content["detail"]
            return Answer("tool error", result.structured_content)

        return call

    door.__name__ = f"mcp_{tool}"
    return door


mcp_create = mcp("create_task", lambda limited: {"step_id": str(limited.target.pk), "title": "new", **limited.task})
mcp_update = mcp(
    "update_task",
    lambda limited: {"task_id": str(limited.make(limited.target, "standard").pk), "class_of_service": "expedite"},
)


def pull(limited: Limited):
    """In Progress fills from Backlog (here every step of the board fills): it skips the task."""
    limited.fill()
    task = limited.waiting()

    def fill_the_board():
        changed = reconcile_board(workflow_id=limited.workflow.pk)
        stayed = Task.objects.get(pk=task.pk).step_id == limited.backlog.pk
        return Answer("skipped" if stayed and not changed else "pulled", None)

    return fill_the_board


def promotion(limited: Limited):
    """In Progress queues what its group or assignee has no room for, and keeps it queued."""
    WorkflowStep.objects.filter(pk=limited.target.pk).update(on_full=OnFull.QUEUE)
    limited.target.refresh_from_db()
    limited.fill()
    task = limited.make(limited.target, "queued", **limited.task)
    assert not task.admitted

    def fill_the_board():
        changed = reconcile_board(workflow_id=limited.workflow.pk)
        stayed = not Task.objects.get(pk=task.pk).admitted
        return Answer("skipped" if stayed and not changed else "promoted", None)

    return fill_the_board


# door, the limits it meets, its answer. A webhook or a review watch brings no assignee; a
# step's own limit is what queues a task, so a promotion never meets it.
ENTRY = ("step", "cell", "lane", "group", "person")  # every limit an entry into In Progress meets
DOORS = [
    (rest_create, ENTRY, 409),
    (rest_move, ENTRY, 409),
    (rest_bulk_move, ENTRY, 409),
    (rest_restore, ENTRY, 409),
    (rest_make_permanent, ENTRY, 409),
    (rest_patch_assignee, ("person",), 409),
    (rest_patch_class, ("expedite",), 409),
    (engine_move, ENTRY, "deferred"),
    (webhook, ("step", "cell", "lane", "group"), 429),
    (review_watch, ("step", "cell", "lane", "group"), "deferred"),
    (mcp_create, ENTRY, "tool error"),
    (mcp_update, ("expedite",), "tool error"),
    (pull, ENTRY, "skipped"),
    (promotion, ("cell", "lane", "group", "person"), "skipped"),
]
# What the request itself leaves: (tasks, events, versions, sessions). Only the engine's
# create persists (the task and its created and deferred events), as it would without a limit.
LEAVES = {engine_move: (1, 2, 1, 0)}
REFUSES = {409, 429, "tool error", "deferred"}

CASES = [
    pytest.param(
        door,
        scope,
        answer,
        id=f"{door.__name__}-{scope}",
        marks=[pytest.mark.django_db(transaction=True)] if door.__name__.startswith("mcp") else [],
    )
    for door, scopes, answer in DOORS
    for scope in scopes
]


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        yield fake


def persisted(workflow) -> tuple:
    """(tasks, events, version, agent sessions) of the board."""
    return (*board_state(workflow), AgentSession.objects.filter(task__workflow=workflow).count())


def refusals(scope: str) -> float:
    labels = {"scope": scope, "reason": "wip_limit_reached"}
    return REGISTRY.get_sample_value("kandev_admissions_rejected_total", labels) or 0


@pytest.mark.parametrize(("door", "scope", "answer"), CASES)
def test_each_door_refuses_with_the_full_limit_and_leaves_nothing(
    door, scope, answer, board, owner, make_task, request
):
    limited = SCOPES[scope](board, owner, make_task, request)
    send = door(limited)
    before, refused_before = persisted(limited.workflow), refusals(scope)

    code, body = send()

    assert code == answer
    if body is not None:
        assert {key: body[key] for key in limited.refusal} == limited.refusal
        assert body["code"] == "wip_limit_reached" and body["detail"]
    assert refusals(scope) - refused_before == (1 if answer in REFUSES else 0)
    after = persisted(limited.workflow)
    assert tuple(a - b for a, b in zip(after, before, strict=True)) == LEAVES.get(door, (0, 0, 0, 0))
