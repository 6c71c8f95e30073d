"""Labels, due dates and checklists on cards: the REST doors (validation, access), the
filters, the board read (its query count) and the live messages."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import checklists, labels
from boards.models import CHECKLIST_ITEMS_MAX, ChecklistItem, EventKind, Label, Task, TaskEvent
from boards.services import task_update
from boards.snapshots import board_snapshot
from common.errors import Invalid
from tests.concurrency import race
from tests.conftest import member_client
from tests.factories import WorkflowFactory, WorkspaceFactory
from workflows.models import Role, Workflow


@pytest.fixture
def label(workflow, owner):
    return labels.label_create(workspace_id=workflow.workspace_id, actor=owner, name="Bug", color="red")


def card_of(board: dict, task) -> dict:
    return next(card for step in board["steps"] for card in step["tasks"] if card["id"] == str(task.pk))


def version(workflow) -> int:
    return Workflow.objects.get(pk=workflow.pk).version


# Labels


def test_members_create_rename_recolour_and_delete_labels(api, workflow):
    made = api.post(
        "/api/v1/labels/", {"workspace_id": str(workflow.workspace_id), "name": " Bug ", "color": "red"}, format="json"
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body == {"id": body["id"], "workspace_id": str(workflow.workspace_id), "name": "Bug", "color": "red"}
    url = f"/api/v1/labels/{body['id']}/"
    assert api.patch(url, {"name": "Defect", "color": "blue"}, format="json").json()["color"] == "blue"
    assert api.get(f"/api/v1/labels/?workspace={workflow.workspace_id}").json()["results"] == [
        {**body, "name": "Defect", "color": "blue"}
    ]
    assert api.delete(url).status_code == 204
    assert not Label.objects.exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "bug"}, "name"),  # taken, whatever its case
        ({"name": ""}, "name"),
        ({"name": "x" * 41}, "name"),
        ({"name": "a\x00b"}, "name"),
        ({"name": "Ok", "color": "#ff0000"}, "color"),
        ({"name": "Ok", "workspace_id": "nope"}, "workspace_id"),
    ],
)
def test_a_bad_label_is_a_400_naming_its_field_and_writes_nothing(api, workflow, label, data, field):
    before = version(workflow)
    answer = api.post("/api/v1/labels/", {"workspace_id": str(workflow.workspace_id), **data}, format="json")
    assert answer.status_code == 400
    assert list(answer.json()["errors"]) == [field]
    assert Label.objects.count() == 1 and version(workflow) == before


def test_viewers_read_labels_and_strangers_never_learn_of_them(workflow, label):
    viewer = member_client(workflow.workspace, Role.VIEWER)
    url = f"/api/v1/labels/{label.pk}/"
    assert viewer.get(url).json()["name"] == "Bug"
    assert viewer.patch(url, {"name": "x"}, format="json").status_code == 403
    assert viewer.delete(url).status_code == 403
    create = viewer.post("/api/v1/labels/", {"workspace_id": str(workflow.workspace_id), "name": "x"}, format="json")
    assert create.status_code == 403
    stranger = member_client(WorkflowFactory().workspace, Role.OWNER)
    assert stranger.get(url).status_code == 404
    assert stranger.patch(url, {"name": "x"}, format="json").status_code == 404
    assert stranger.delete(url).status_code == 404
    assert stranger.get("/api/v1/labels/not-an-id/").status_code == 404
    assert stranger.get(f"/api/v1/labels/?workspace={workflow.workspace_id}").json()["results"] == []
    answer = stranger.post("/api/v1/labels/", {"workspace_id": str(workflow.workspace_id), "name": "x"}, format="json")
    assert (answer.status_code, answer.json()["errors"]) == (400, {"workspace_id": ["No such workspace."]})
    assert Label.objects.get().name == "Bug"


def test_a_task_carries_its_workspaces_labels_only(api, board, make_task, workflow, label, owner):
    task = make_task(board[0], "Fix login")
    url = f"/api/v1/tasks/{task.pk}/"
    assert api.patch(url, {"label_ids": [str(label.pk)]}, format="json").json()["label_ids"] == [str(label.pk)]
    foreign = Label.objects.create(workspace=WorkflowFactory().workspace, name="Theirs")
    before = version(workflow)
    for wrong in ([str(foreign.pk)], ["nope"], [str(label.pk)] * 21, "Bug"):
        answer = api.patch(url, {"label_ids": wrong}, format="json")
        assert answer.status_code == 400 and list(answer.json()["errors"]) == ["label_ids"], wrong
    assert Task.objects.get(pk=task.pk).label_ids == [str(label.pk)] and version(workflow) == before
    assert list(Task.objects.get(pk=task.pk).labels.all()) == [label]
    cleared = api.patch(url, {"label_ids": []}, format="json").json()
    assert cleared["label_ids"] == [] and not Task.objects.filter(labels=label).exists()
    events = TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.LABELED).order_by("id")
    assert [(e.detail["added"], e.detail["removed"]) for e in events] == [([str(label.pk)], []), ([], [str(label.pk)])]


def test_deleting_a_label_takes_it_off_every_card_of_every_board(api, board, make_task, workflow, label, owner):
    other_board = WorkflowFactory(workspace=workflow.workspace)
    other_step = other_board.steps.create(name="Todo", position=0, is_start_step=True)
    first, second = make_task(board[0], "a"), make_task(other_step, "b")
    keep = labels.label_create(workspace_id=workflow.workspace_id, actor=owner, name="Keep", color="green")
    for task in (first, second):
        task_update(task=task, actor=owner, label_ids=[label.pk, keep.pk])
    assert api.delete(f"/api/v1/labels/{label.pk}/").status_code == 204
    assert {t.label_ids == [str(keep.pk)] for t in Task.objects.all()} == {True}
    assert [list(t.labels.all()) for t in Task.objects.all()] == [[keep], [keep]]


def test_label_changes_reach_every_board_live_and_no_kept_board_is_stale(
    board, make_task, workflow, label, owner, broadcasts
):
    task = make_task(board[0], "Fix login")
    task_update(task=task, actor=owner, label_ids=[label.pk])
    before = board_snapshot(workflow=Workflow.objects.get(pk=workflow.pk))
    assert before["labels"] == [
        {"id": str(label.pk), "workspace_id": str(workflow.workspace_id), "name": "Bug", "color": "red"}
    ]

    (renamed,) = broadcasts(workflow, lambda: labels.label_update(label=label, actor=owner, name="Defect"))
    assert renamed["type"] == "label.updated" and renamed["label"]["name"] == "Defect"
    assert renamed["version"] == version(workflow)
    after = board_snapshot(workflow=Workflow.objects.get(pk=workflow.pk))
    assert [x["name"] for x in after["labels"]] == ["Defect"]

    (deleted,) = broadcasts(workflow, lambda: labels.label_delete(label=label, actor=owner))
    assert (deleted["type"], deleted["label_id"]) == ("label.deleted", str(label.pk))
    assert [(t["id"], t["label_ids"]) for t in deleted["tasks"]] == [(str(task.pk), [])]
    last = board_snapshot(workflow=Workflow.objects.get(pk=workflow.pk))
    assert last["labels"] == [] and card_of(last, task)["label_ids"] == []


# Due dates


def test_a_due_date_is_a_day_or_a_moment_and_null_clears_it(api, board, make_task, workflow):
    task = make_task(board[0], "Ship")
    url = f"/api/v1/tasks/{task.pk}/"
    day = api.patch(url, {"due_at": "2026-12-05"}, format="json").json()
    assert (day["due_at"], day["due_all_day"]) == ("2026-12-05T00:00:00+00:00", True)
    moment = api.patch(url, {"due_at": "2026-12-05T15:30:00+01:00"}, format="json").json()
    assert (moment["due_at"], moment["due_all_day"]) == ("2026-12-05T14:30:00+00:00", False)
    before = version(workflow)
    for wrong in ("tomorrow", "2026-12-05T15:30:00", "2026-13-01", 20261205, "9" * 50):
        answer = api.patch(url, {"due_at": wrong}, format="json")
        assert answer.status_code == 400 and list(answer.json()["errors"]) == ["due_at"], wrong
    assert version(workflow) == before
    cleared = api.patch(url, {"due_at": None}, format="json").json()
    assert (cleared["due_at"], cleared["due_all_day"]) == (None, False)
    events = TaskEvent.objects.filter(task_id=task.pk, kind=EventKind.DUE).order_by("id")
    assert [e.detail["due_at"] for e in events] == ["2026-12-05T00:00:00+00:00", "2026-12-05T14:30:00+00:00", None]


def test_tasks_filter_by_label_and_due_and_sort_by_due(api, board, make_task, owner, label):
    late, soon, never = (make_task(board[0], title) for title in ("late", "soon", "never"))
    task_update(task=late, actor=owner, label_ids=[label.pk], due_at=_day("2026-12-20"), due_all_day=True)
    task_update(task=soon, actor=owner, due_at=_day("2026-12-03"), due_all_day=True)

    def titles(query):
        answer = api.get(f"/api/v1/tasks/?{query}")
        assert answer.status_code == 200, answer.content
        return [t["title"] for t in answer.json()["results"]]

    assert titles(f"label={label.pk}") == ["late"]
    assert sorted(titles("due_before=2026-12-10")) == ["soon"]
    assert sorted(titles("due_after=2026-12-10")) == ["late"]
    assert titles("due_after=2026-12-03T00:00:00Z&due_before=2026-12-04") == ["soon"]
    assert titles("sort=due") == ["soon", "late", "never"]
    for query, field in (
        ("label=nope", "label"),
        ("due_before=soon", "due_before"),
        ("sort=title", "sort"),
        ("colour=red", "colour"),
    ):
        answer = api.get(f"/api/v1/tasks/?{query}")
        assert answer.status_code == 400 and list(answer.json()["errors"]) == [field], query


def _day(text):
    import datetime

    return datetime.datetime.fromisoformat(f"{text}T00:00:00+00:00")


# Checklists


def test_members_add_tick_edit_reorder_and_delete_checklist_items(api, board, make_task):
    task = make_task(board[0], "Release")
    url = f"/api/v1/tasks/{task.pk}/checklist/"
    made = [api.post(url, {"text": text}, format="json") for text in ("Build", "Test", "Tag")]
    assert [m.status_code for m in made] == [201, 201, 201]
    build, test, tag = (m.json() for m in made)
    assert build == {"id": build["id"], "task_id": str(task.pk), "text": "Build", "done": False, "position": 0}
    ticked = api.patch(f"/api/v1/checklist-items/{build['id']}/", {"done": True}, format="json").json()
    assert ticked["done"] is True
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["checklist"] == {"done": 1, "total": 3}
    api.patch(f"/api/v1/checklist-items/{tag['id']}/", {"position": 0, "text": "Tag it"}, format="json")
    assert [(i["text"], i["position"]) for i in api.get(url).json()["results"]] == [
        ("Tag it", 0),
        ("Build", 1),
        ("Test", 2),
    ]
    assert api.delete(f"/api/v1/checklist-items/{build['id']}/").status_code == 204
    assert [(i["text"], i["position"]) for i in api.get(url).json()["results"]] == [("Tag it", 0), ("Test", 1)]
    assert api.get(f"/api/v1/tasks/{task.pk}/").json()["checklist"] == {"done": 0, "total": 2}


def test_bad_checklist_writes_are_refused_and_write_nothing(api, board, make_task, workflow):
    task = make_task(board[0], "Release")
    url = f"/api/v1/tasks/{task.pk}/checklist/"
    item = api.post(url, {"text": "Build"}, format="json").json()
    before = version(workflow)
    for wrong in ({"text": ""}, {"text": "x" * 501}, {"text": "\x07"}, {}):
        answer = api.post(url, wrong, format="json")
        assert answer.status_code == 400 and list(answer.json()["errors"]) == ["text"], wrong
    for wrong, field in (({"done": "maybe"}, "done"), ({"position": -1}, "position"), ({"text": " "}, "text")):
        answer = api.patch(f"/api/v1/checklist-items/{item['id']}/", wrong, format="json")
        assert answer.status_code == 400 and list(answer.json()["errors"]) == [field], wrong
    ChecklistItem.objects.bulk_create(
        ChecklistItem(task=task, text=f"{i}", position=i + 1) for i in range(CHECKLIST_ITEMS_MAX - 1)
    )
    full = api.post(url, {"text": "one too many"}, format="json")
    assert (full.status_code, full.json()["code"]) == (409, "too_many_items")
    assert ChecklistItem.objects.count() == CHECKLIST_ITEMS_MAX and version(workflow) == before


def test_viewers_read_checklists_and_strangers_never_learn_of_them(board, make_task, workflow, owner):
    task = make_task(board[0], "Release")
    item = checklists.checklist_add(task=task, actor=owner, text="Build")
    viewer = member_client(workflow.workspace, Role.VIEWER)
    assert [i["text"] for i in viewer.get(f"/api/v1/tasks/{task.pk}/checklist/").json()["results"]] == ["Build"]
    assert viewer.post(f"/api/v1/tasks/{task.pk}/checklist/", {"text": "x"}, format="json").status_code == 403
    assert viewer.patch(f"/api/v1/checklist-items/{item.pk}/", {"done": True}, format="json").status_code == 403
    assert viewer.delete(f"/api/v1/checklist-items/{item.pk}/").status_code == 403
    stranger = member_client(WorkflowFactory().workspace, Role.OWNER)
    assert stranger.get(f"/api/v1/tasks/{task.pk}/checklist/").status_code == 404
    assert stranger.post(f"/api/v1/tasks/{task.pk}/checklist/", {"text": "x"}, format="json").status_code == 404
    assert stranger.patch(f"/api/v1/checklist-items/{item.pk}/", {"done": True}, format="json").status_code == 404
    assert stranger.delete(f"/api/v1/checklist-items/{item.pk}/").status_code == 404
    assert stranger.delete("/api/v1/checklist-items/nope/").status_code == 404
    assert ChecklistItem.objects.get().done is False


def test_a_ticked_item_reaches_the_board_live_with_the_card(board, make_task, workflow, owner, broadcasts):
    task = make_task(board[0], "Release")
    item = checklists.checklist_add(task=task, actor=owner, text="Build")
    (message,) = broadcasts(workflow, lambda: checklists.checklist_update(item=item, actor=owner, done=True))
    assert message["type"] == "task.updated" and message["version"] == version(workflow)
    assert message["task"]["checklist"] == {"done": 1, "total": 1}
    card = card_of(board_snapshot(workflow=Workflow.objects.get(pk=workflow.pk)), task)
    assert card["checklist"] == {"done": 1, "total": 1}


# The board read


@pytest.mark.parametrize("tasks", [5, 50])
def test_the_board_read_costs_the_same_with_labels_and_checklists_on_every_card(
    api, board, make_task, owner, label, tasks
):
    keep = labels.label_create(workspace_id=board[0].workflow.workspace_id, actor=owner, name="Keep", color="teal")
    for i in range(tasks):
        task = make_task(board[0], f"t{i}")
        task_update(task=task, actor=owner, label_ids=[label.pk, keep.pk], due_at=_day("2026-12-05"), due_all_day=True)
        checklists.checklist_add(task=task, actor=owner, text="one")
    with CaptureQueriesContext(connection) as queries:
        read = api.get(f"/api/v1/workflows/{board[0].workflow_id}/board/").json()
    assert len(queries) == 7  # the role with the workflow, steps, tasks, sessions, agents, labels, lanes (and cells)
    cards = [card for step in read["steps"] for card in step["tasks"]]  # In Progress pulls two
    assert len(cards) == tasks
    assert {(tuple(c["label_ids"]), c["due_all_day"], c["checklist"]["total"]) for c in cards} == {
        (tuple(sorted([str(label.pk), str(keep.pk)])), True, 1)
    }
    assert [x["name"] for x in read["labels"]] == ["Bug", "Keep"]


@pytest.mark.django_db(transaction=True)
def test_two_labels_given_one_name_at_once_make_one_label(owner):
    # A workspace without boards: nothing orders the two but the name's unique constraint.
    workspace = WorkspaceFactory()
    outcomes = race(2, lambda i: labels.label_create(workspace_id=workspace.pk, actor=owner, name="Bug", color="red"))
    assert sorted(type(o).__name__ for o in outcomes) == ["Invalid", "Label"]
    refused = next(o for o in outcomes if isinstance(o, Invalid))
    assert refused.extra["errors"] == {"name": [labels.NAME_TAKEN]}
    assert Label.objects.filter(workspace=workspace).count() == 1
