"""A rich board exported and imported back: everything a person sees of it through the API
(the board with its lanes, cells, groups and limits; each card with its comments, checklist,
links and history; the flow figures) is the same on the copy, ids aside."""

import datetime
import json

import pytest

from boards import checklists, labels, services
from boards.admission import task_archive, task_create, task_move
from boards.comments import comment_create
from boards.links import link_create
from boards.models import Task, TaskEvent
from boards.structure import lane_create
from tests import factories
from tests.boards.test_backup import export, import_, renamed
from tests.factories import MembershipFactory, UserFactory
from workflows.models import Role, Workflow

pytestmark = pytest.mark.django_db

START = datetime.datetime(2026, 2, 2, 9, tzinfo=datetime.UTC)
# What an import cannot keep and a person does not see: ids, the board's change counter, and
# in an event's detail the ids of the old install's labels and links (the timeline says
# "Labels changed", "A blocker was linked").
UNSEEN = {"version"}
UNSEEN_IN_DETAIL = {"label_ids", "added", "removed", "blocker_id", "link_id"}


@pytest.fixture
def rich(workflow, owner, api):
    backlog, doing, review, done, group = factories.board(
        workflow, active={"In Progress": 3, "Review": 2}, pulls="none", group=("Doing", 4)
    )
    urgent = lane_create(workflow=workflow, actor=owner, name="Urgent", wip_limit=2)
    assert (
        api.put(
            f"/api/v1/lanes/{urgent.pk}/cells/", [{"step_id": str(doing.pk), "wip_limit": 1}], format="json"
        ).status_code
        == 200
    )
    ada = UserFactory(username="ada")
    MembershipFactory(workspace=workflow.workspace, user=ada, role=Role.MEMBER)
    bug = labels.label_create(workspace_id=workflow.workspace_id, actor=owner, name="Bug", color="red")

    def make(title, **fields):
        return task_create(workflow=workflow, step=backlog, actor=owner, title=title, **fields).task

    spec, build, ship, old = make("Write the spec"), make("Build it", assignee_id=ada.pk), make("Ship it"), make("Old")
    task_move(task=spec, to_step=doing, actor=owner, lane_id=urgent.pk)
    task_move(task=build, to_step=doing, actor=ada)
    task_move(task=Task.objects.get(pk=build.pk), to_step=review, actor=ada)
    services.task_block(task=Task.objects.get(pk=spec.pk), actor=owner, reason="waiting on legal")
    services.task_update(
        task=Task.objects.get(pk=build.pk),
        actor=owner,
        label_ids=[bug.pk],
        due_at=START.replace(hour=0),
        due_all_day=True,
    )
    for text in ("Draft", "Review"):
        checklists.checklist_add(task=Task.objects.get(pk=spec.pk), actor=owner, text=text)
    checklists.checklist_update(item=Task.objects.get(pk=spec.pk).checklist_items.first(), actor=owner, done=True)
    comment_create(task=Task.objects.get(pk=build.pk), author=ada, body="Ready for **review**, @olivia")
    link_create(
        blocker=Task.objects.get(pk=spec.pk), dependent=Task.objects.get(pk=ship.pk), actor=owner, field="blocks"
    )
    task_move(task=Task.objects.get(pk=old.pk), to_step=done, actor=owner)
    task_archive(task=Task.objects.get(pk=old.pk), actor=owner)
    for i, pk in enumerate(TaskEvent.objects.filter(workflow=workflow).order_by("id").values_list("pk", flat=True)):
        TaskEvent.objects.filter(pk=pk).update(at=START + datetime.timedelta(hours=5 * i))
    return workflow


def seen(api, workflow) -> dict:
    """What the API shows of the board, its cards and its flow, with the board's own ids
    named (steps, lanes, groups, labels by name, tasks by title) and other ids left out."""
    board = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()
    tasks = Task.objects.filter(workflow=workflow).order_by("title")
    shown = {"board": board, "archive": api.get(f"/api/v1/tasks/?workflow={workflow.pk}&archived=1").json()}
    for task in tasks:
        shown[task.title] = {
            part: api.get(f"/api/v1/tasks/{task.pk}/{part}").json()
            for part in ("", "comments/", "checklist/", "links/", "events/")
        }
    window = "from=2026-02-01T00:00:00Z&to=2026-02-10T00:00:00Z"
    for figure in ("cfd", "cycle-times", "throughput"):
        shown[figure] = api.get(f"/api/v1/workflows/{workflow.pk}/flow/{figure}/?{window}").json()
    names = {str(workflow.pk): "the board", **{str(t.pk): t.title for t in tasks}}
    names.update({str(s.pk): s.name for s in workflow.steps.all()})
    names.update({str(lane.pk): lane.name for lane in workflow.lanes.all()})
    names.update({str(g.pk): g.name for g in workflow.step_groups.all()})
    names.update({str(label.pk): label.name for label in workflow.workspace.labels.all()})
    return _named(shown, names)


def _named(value, names: dict, unseen_here=frozenset()):
    if isinstance(value, dict):
        # A card's sort key: its order shows, its number does not.
        unseen = UNSEEN | unseen_here | ({"position"} if "title" in value else set())
        # A link is made by the import (its maker and time are the importer's and now).
        unseen |= {"created_at", "created_by"} if "blocker" in value else set()
        return {
            _named(k, names): _named(v, names, UNSEEN_IN_DETAIL if k == "detail" else frozenset())
            for k, v in value.items()
            if k not in unseen and not (k == "id" and str(v) not in names)
        }
    if isinstance(value, list):
        return [_named(v, names) for v in value]
    if isinstance(value, str):
        for pk, name in names.items():
            value = value.replace(pk, name)
    return value


def test_a_rich_board_comes_back_as_it_was(api, rich):
    copy_id = import_(api, rich.workspace, renamed(export(api, rich), "Delivery")).json()["workflows"][0]["id"]
    copy = Workflow.objects.get(pk=copy_id)

    original, restored = seen(api, rich), seen(api, copy)

    assert json.dumps(restored, indent=1, sort_keys=True) == json.dumps(original, indent=1, sort_keys=True)
    assert original["board"]["lanes"] and original["board"]["cells"] and original["board"]["groups"]
    assert original["Build it"]["comments/"] and original["Write the spec"]["checklist/"]
    assert original["Ship it"]["links/"] and original["Old"]["events/"]
