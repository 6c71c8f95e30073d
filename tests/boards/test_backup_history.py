"""A backup keeps the history (boards/backup.py, version 3): each task's lane, times and
events come back as they were, so the flow figures of the copy are the original's."""

import datetime
import json

import pytest

from boards import services
from boards.admission import task_archive, task_create, task_move
from boards.models import EventKind, Task, TaskEvent
from boards.structure import lane_create
from tests import factories
from tests.boards.test_backup import export, import_, renamed
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role, Workflow

pytestmark = pytest.mark.django_db

START = datetime.datetime(2026, 3, 2, 9, tzinfo=datetime.UTC)


@pytest.fixture
def source(workflow, owner):
    """Six tasks that went through Backlog -> In Progress -> Review -> Done over ten days, in
    two lanes, one archived, one blocked, moved by two people."""
    backlog, doing, review, done = factories.board(workflow, active={"In Progress": 3, "Review": 2}, pulls="none")
    urgent = lane_create(workflow=workflow, actor=owner, name="Urgent", position=0)
    ada = UserFactory(username="ada")
    MembershipFactory(workspace=workflow.workspace, user=ada, role=Role.MEMBER)
    tasks = [
        task_create(workflow=workflow, step=backlog, actor=owner, title=f"Task {n}", assignee_id=ada.pk).task
        for n in range(6)
    ]
    for n, task in enumerate(tasks):
        for step in (doing, review, done)[: n % 4]:
            task_move(task=task, to_step=step, actor=ada if n % 2 else owner, lane_id=urgent.pk if n == 1 else None)
    services.task_block(task=Task.objects.get(pk=tasks[1].pk), actor=owner, reason="waiting on the vendor")
    task_archive(task=Task.objects.get(pk=tasks[3].pk), actor=owner)
    # The history spread over ten days, in the order it happened.
    for i, pk in enumerate(TaskEvent.objects.filter(workflow=workflow).order_by("id").values_list("pk", flat=True)):
        TaskEvent.objects.filter(pk=pk).update(at=START + datetime.timedelta(hours=7 * i))
    return workflow


def flow(api, workflow) -> dict:
    """The board's CFD and cycle times over the history's window, with its steps and tasks
    named by name and title (the copy's ids differ)."""
    window = "from=2026-03-01T00:00:00Z&to=2026-03-20T00:00:00Z"
    figures = {}
    for figure in ("cfd", "cycle-times"):
        response = api.get(f"/api/v1/workflows/{workflow.pk}/flow/{figure}/?{window}")
        assert response.status_code == 200, response.content
        figures[figure] = response.content.decode()
    text = json.dumps(figures)
    for step in workflow.steps.all():
        text = text.replace(str(step.pk), step.name)
    for lane in workflow.lanes.all():
        text = text.replace(str(lane.pk), lane.name)
    for task in Task.objects.filter(workflow=workflow):
        text = text.replace(str(task.pk), task.title)
    return json.loads(text.replace(str(workflow.pk), "the board"))


def imported(api, workspace, document) -> Workflow:
    response = import_(api, workspace, document)
    assert response.status_code == 201, response.json()
    return Workflow.objects.get(pk=response.json()["workflows"][0]["id"])


def history(workflow) -> list:
    events = TaskEvent.objects.filter(workflow=workflow).order_by("at", "id").select_related("actor", "task")
    return [
        (e.task.title, e.kind, e.from_step and e.from_step.name, e.to_step and e.to_step.name, e.actor, e.reason, e.at)
        for e in events.select_related("from_step", "to_step")
    ]


def test_the_copy_has_the_same_history_times_lanes_and_flow(api, source):
    copy = imported(api, source.workspace, renamed(export(api, source)))

    assert history(copy) == history(source)
    fields = ("title", "step__name", "lane__name", "created_at", "updated_at", "started_at", "entered_step_at")
    fields += ("archived_at",)
    fields += ("blocked_at", "blocked_reason", "queued_at", "admitted", "assignee__username")
    assert list(Task.objects.filter(workflow=copy).order_by("title").values_list(*fields)) == list(
        Task.objects.filter(workflow=source).order_by("title").values_list(*fields)
    )
    figures = flow(api, source)
    assert flow(api, copy) == figures
    assert figures != flow(api, factories.WorkflowFactory(workspace=source.workspace))  # not empty alike


def test_an_actor_who_is_not_a_member_there_becomes_nobody(api, source, owner):
    elsewhere = factories.WorkspaceFactory()
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.OWNER)

    copy = imported(api, elsewhere, renamed(export(api, source)))

    actors = set(TaskEvent.objects.filter(workflow=copy).values_list("actor__username", flat=True))
    assert actors == {"olivia", None}  # ada's moves are kept, as nobody's
    assignments = TaskEvent.objects.filter(workflow=copy, kind=EventKind.ASSIGNED).values_list("detail", flat=True)
    assert all(detail["assignee_id"] is None for detail in assignments)


def test_the_events_a_document_restores_are_bounded(api, source, settings):
    document = renamed(export(api, source))
    events = sum(len(task["history"]) for task in document["workflows"][0]["tasks"])
    settings.KANDEV_MAX_IMPORT_EVENTS = events - 1

    response = import_(api, source.workspace, document)

    assert response.status_code == 400
    assert response.json()["errors"] == {
        "workflows": [f"An import restores at most {events - 1} history events; this one has {events}."]
    }
    assert not Workflow.objects.filter(name="Restored").exists()


def test_bad_events_are_400s_naming_each_field(api, source):
    document = renamed(export(api, source))
    tasks = document["workflows"][0]["tasks"]
    tasks[0]["history"][0]["kind"] = "teleported"
    tasks[1]["history"][0]["at"] = "yesterday"
    tasks[2]["history"][1]["to_step_position"] = 9
    tasks[3]["history"] = "all of it"
    tasks[4]["lane_position"] = 5

    response = import_(api, source.workspace, document)

    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == [
        "workflows[0].tasks[0].history[0].kind",
        "workflows[0].tasks[1].history[0].at",
        "workflows[0].tasks[2].history[1].to_step_position",
        "workflows[0].tasks[3].history",
        "workflows[0].tasks[4].lane_position",
    ]
    assert not Workflow.objects.filter(name="Restored").exists()


@pytest.mark.parametrize("version", [1, 2])
def test_older_documents_start_each_history_with_an_imported_event(api, source, version):
    document = renamed(export(api, source))
    document["version"] = version
    if version == 1:
        for workflow in document["workflows"]:
            workflow.pop("tasks")

    copy = imported(api, source.workspace, document)

    tasks = Task.objects.filter(workflow=copy)
    assert tasks.count() == (6 if version == 2 else 0)
    for task in tasks:
        kinds = list(task.events.order_by("id").values_list("kind", flat=True))
        assert kinds[0] == EventKind.IMPORTED
        assert EventKind.CREATED in kinds[1:]
