"""A board's backup: export version 3 with its tasks, import with the tasks admitted as
creates (boards/backup.py), all or nothing."""

import datetime
import json

import pytest

from boards import blocker_types, checklists, labels, services
from boards.admission import task_archive, task_create
from boards.backup import export_tasks
from boards.comments import comment_create
from boards.models import (
    BLOCKER_TYPES_PER_WORKSPACE_MAX,
    BlockerType,
    ClassOfService,
    Comment,
    EventKind,
    Label,
    Priority,
    Task,
    TaskEvent,
)
from tests import factories
from tests.conftest import member_client
from tests.factories import MembershipFactory, UserFactory
from workflows.models import ConfigChange, LimitScope, Membership, OnFull, Role, Workflow

pytestmark = pytest.mark.django_db


@pytest.fixture
def source(workflow, owner):
    """Backlog -> In Progress (2, pulls from Backlog) -> Review (1, queue mode) -> Done, with
    tasks of every kind: admitted, queued, blocked, assigned, expedite, archived."""
    backlog, doing, review, done = factories.board(workflow, active={"In Progress": 2, "Review": 1})
    review.on_full = OnFull.QUEUE
    review.save(update_fields=["on_full"])
    ada = UserFactory(username="ada")
    MembershipFactory(workspace=workflow.workspace, user=ada, role=Role.MEMBER)

    def make(step, title, **fields):
        return task_create(workflow=workflow, step=step, actor=owner, title=title, **fields).task

    importer = make(doing, "Build the importer", assignee_id=ada.pk, priority=Priority.HIGH)
    make(doing, "Write the docs", class_of_service=ClassOfService.EXPEDITE)
    first = make(backlog, "Plan the release", description="Line one\n\n- a list", priority=Priority.LOW)
    services.task_block(task=make(backlog, "Call the vendor"), actor=owner, reason="waiting on their answer")
    make(review, "Review the schema")
    make(review, "Review the page")  # queued: Review is full
    task_archive(task=make(done, "Ship v1"), actor=owner)
    make(done, "Ship v2", priority=Priority.CRITICAL)
    Task.objects.filter(pk=first.pk).update(created_at=datetime.datetime(2025, 1, 2, 3, 4, 5, tzinfo=datetime.UTC))
    # A card's labels, due date and checklist.
    bug = labels.label_create(workspace_id=workflow.workspace_id, actor=owner, name="Bug", color="red")
    docs = labels.label_create(workspace_id=workflow.workspace_id, actor=owner, name="Docs", color="blue")
    due = datetime.datetime(2026, 12, 5, 14, 30, tzinfo=datetime.UTC)
    services.task_update(task=importer, actor=owner, label_ids=[bug.pk, docs.pk], due_at=due, due_all_day=False)
    for text in ("Parse", "Admit"):
        checklists.checklist_add(task=importer, actor=owner, text=text)
    checklists.checklist_update(item=importer.checklist_items.first(), actor=owner, done=True)
    comment_create(task=first, author=ada, body="Which **date**, @olivia?")
    Comment.objects.update(created_at=datetime.datetime(2025, 1, 3, tzinfo=datetime.UTC))
    return workflow


def export(api, workflow, query=""):
    response = api.get(f"/api/v1/workflows/{workflow.pk}/export/?format=json{query}")
    assert response.status_code == 200
    return json.loads(response.content)


def import_(client, workspace, document, query=""):
    return client.post(
        f"/api/v1/workspaces/{workspace.pk}/workflows/import/{query}",
        data=json.dumps(document),
        content_type="application/json",
    )


def renamed(document, name="Restored"):
    document["workflows"][0]["name"] = name
    return document


def test_the_export_carries_version_3_and_every_task_in_board_order(api, source):
    document = export(api, source)
    assert document["version"] == 3
    tasks = document["workflows"][0]["tasks"]
    assert [(t["step"], t["title"], t["archived"]) for t in tasks] == [
        ("Backlog", "Plan the release", False),
        ("Backlog", "Call the vendor", False),
        ("In Progress", "Build the importer", False),
        ("In Progress", "Write the docs", False),
        ("Review", "Review the schema", False),
        ("Review", "Review the page", False),  # the queued one after the admitted one
        ("Done", "Ship v2", False),
        ("Done", "Ship v1", True),  # archived tasks last
    ]
    kept = ("lane_position", "updated_at", "started_at", "entered_step_at", "archived_at", "blocked_at", "queued_at")
    kept += ("history",)
    assert {key: value for key, value in tasks[0].items() if key not in kept} == {
        "title": "Plan the release",
        "description": "Line one\n\n- a list",
        "step": "Backlog",
        "step_position": 0,
        "priority": "low",
        "class_of_service": "standard",
        "assignee": None,
        "blocked_reason": "",
        "blocked_type": None,
        "archived": False,
        "created_at": "2025-01-02T03:04:05+00:00",
        "labels": [],
        "due_at": None,
        "checklist": [],
        "comments": [
            {
                "author": "ada",
                "body": "Which **date**, @olivia?",
                "created_at": "2025-01-03T00:00:00+00:00",
                "edited_at": None,
            }
        ],
    }
    assert tasks[1]["blocked_reason"] == "waiting on their answer"
    assert tasks[2]["assignee"] == "ada"
    assert {key: tasks[2][key] for key in ("labels", "due_at", "checklist")} == {
        "labels": [{"name": "Bug", "color": "red"}, {"name": "Docs", "color": "blue"}],
        "due_at": "2026-12-05T14:30:00+00:00",
        "checklist": [{"text": "Parse", "done": True}, {"text": "Admit", "done": False}],
    }
    assert tasks[3]["class_of_service"] == "expedite"


def test_the_structure_alone_is_still_available(api, source):
    assert "tasks" not in export(api, source, "&tasks=0")["workflows"][0]
    assert api.get(f"/api/v1/workflows/{source.pk}/export/?tasks=maybe").status_code == 400


def test_an_export_imported_back_brings_every_task_back(api, source):
    response = import_(api, source.workspace, renamed(export(api, source)))
    assert response.status_code == 201, response.json()
    [imported] = response.json()["workflows"]
    assert imported["tasks"] == {
        "created": 6,
        "queued": 1,
        "forced": 0,
        "archived": 1,
        "refused": [],
        "unassigned": [],
    }
    copy = Workflow.objects.get(pk=imported["id"])
    assert export_tasks(copy) == export_tasks(source)  # every field, in the same order
    queued = Task.objects.get(workflow=copy, title="Review the page")
    assert (queued.admitted, queued.queued_at is not None) == (False, True)
    blocked = Task.objects.get(workflow=copy, title="Call the vendor")
    assert blocked.blocked_at is not None
    planned = Task.objects.get(workflow=copy, title="Plan the release")
    assert planned.comment_count == 1
    assert list(planned.comments.values_list("mentions__username", flat=True)) == ["olivia"]

    def kinds(workflow):  # the history comes along as it was
        return list(TaskEvent.objects.filter(workflow=workflow).order_by("at", "id").values_list("kind", flat=True))

    assert kinds(copy) == kinds(source)


def test_a_task_over_a_limit_refuses_the_whole_import_unless_an_owner_forces_it(api, source, owner):
    document = renamed(export(api, source))
    doing = document["workflows"][0]["tasks"][2]
    # After the expedite one (admitted past the limit, within the board's expedite allowance).
    document["workflows"][0]["tasks"].insert(4, {**doing, "title": "A third one", "assignee": None})
    response = import_(api, source.workspace, document)
    assert response.status_code == 409
    body = response.json()
    assert body["code"] == "wip_limit_reached"
    assert body["row"] == "workflows[0].tasks[4]"
    assert body["detail"] == 'workflows[0].tasks[4]: Step "In Progress" is at its WIP limit (2 of 2).'
    assert not Workflow.objects.filter(name="Restored").exists()

    member = member_client(source.workspace, Role.MEMBER)
    assert import_(member, source.workspace, document, "?force=1").status_code == 403
    assert not Workflow.objects.filter(name="Restored").exists()

    response = import_(api, source.workspace, document, "?force=1")
    assert response.status_code == 201
    assert response.json()["workflows"][0]["tasks"]["forced"] == 1
    forced = TaskEvent.objects.get(workflow__name="Restored", kind=EventKind.FORCED)
    assert (forced.actor, forced.reason) == (owner, "Imported from a kandev export.")


def test_bad_tasks_are_400_naming_each_field_and_nothing_is_written(api, source):
    document = renamed(export(api, source))
    tasks = document["workflows"][0]["tasks"]
    tasks[0]["priority"] = "urgent"
    tasks[1]["title"] = " "
    tasks[2]["step_position"] = 9
    tasks[3]["created_at"] = "yesterday"
    tasks[4]["archived"] = "no"
    tasks[5] = "a string"
    tasks[6]["due_at"] = "soon"
    tasks[6]["labels"] = [{"name": ""}]
    tasks[6]["checklist"] = [{"text": "x", "done": "yes"}]
    response = import_(api, source.workspace, document)
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "workflows[0].tasks[0].priority": ["Must be one of critical, high, medium, low, none."],
        "workflows[0].tasks[1].title": ["This field may not be blank."],
        "workflows[0].tasks[2].step_position": ["No step at position 9."],
        "workflows[0].tasks[3].created_at": ["Must be an ISO 8601 date-time."],
        "workflows[0].tasks[4].archived": ["Must be true or false."],
        "workflows[0].tasks[5]": ["Must be a mapping with title, step and the task's fields."],
        "workflows[0].tasks[6].due_at": ['A date ("2026-12-05") or a moment with its offset.'],
        "workflows[0].tasks[6].labels[0].name": ["This field may not be blank."],
        "workflows[0].tasks[6].checklist[0].done": ["Must be true or false."],
    }
    assert not Workflow.objects.filter(name="Restored").exists()


def test_the_task_count_is_bounded(api, source, settings):
    settings.KANDEV_MAX_IMPORT_TASKS = 5
    response = import_(api, source.workspace, renamed(export(api, source)))
    assert response.status_code == 400
    assert response.json()["errors"] == {"workflows": ["An import brings at most 5 tasks; this one has 8."]}


def test_people_who_are_not_in_the_workspace_leave_their_tasks_unassigned(api, source, owner):
    document = renamed(export(api, source))
    other = factories.WorkspaceFactory()
    MembershipFactory(workspace=other, user=owner, role=Role.OWNER)
    response = import_(api, other, document)
    assert response.status_code == 201
    assert response.json()["workflows"][0]["tasks"]["unassigned"] == ["workflows[0].tasks[2]"]
    assert not Task.objects.filter(workflow__workspace=other, assignee__isnull=False).exists()


def test_a_version_1_document_still_imports_as_an_empty_board(api, source):
    document = renamed(export(api, source, "&tasks=0"))
    document["version"] = 1
    response = import_(api, source.workspace, document)
    assert response.status_code == 201
    assert response.json()["workflows"][0]["tasks"]["created"] == 0
    assert not Task.objects.filter(workflow__name="Restored").exists()


def test_a_dry_run_answers_what_the_import_would_do_and_writes_nothing(api, source):
    before = (Workflow.objects.count(), Task.objects.count(), TaskEvent.objects.count())
    response = import_(api, source.workspace, renamed(export(api, source)), "?dry_run=1")
    assert response.status_code == 200
    assert response.json() == {
        "dry_run": True,
        "workflows": [
            {
                "name": "Restored",
                "tasks": {"created": 6, "queued": 1, "forced": 0, "archived": 1, "refused": [], "unassigned": []},
            }
        ],
        "people": {"applied": [], "kept": [], "skipped": []},
    }
    assert (Workflow.objects.count(), Task.objects.count(), TaskEvent.objects.count()) == before


def test_a_backup_brought_to_another_workspace_brings_its_labels(api, source, owner):
    elsewhere = factories.WorkspaceFactory()
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.OWNER)
    factories.WorkflowFactory(workspace=elsewhere, name="Already there")
    labels.label_create(workspace_id=elsewhere.pk, actor=owner, name="bug", color="green")  # matched without case
    response = import_(api, elsewhere, renamed(export(api, source)))
    assert response.status_code == 201, response.json()
    copy = Workflow.objects.get(pk=response.json()["workflows"][0]["id"])
    assert export_tasks(copy)[2]["labels"] == [{"name": "Docs", "color": "blue"}, {"name": "bug", "color": "green"}]
    assert sorted(Label.objects.filter(workspace=elsewhere).values_list("name", flat=True)) == ["Docs", "bug"]


def test_a_blocks_type_goes_by_name_found_without_case_or_made(api, source, owner):
    vendor = blocker_types.blocker_type_create(workspace_id=source.workspace_id, actor=owner, name="Vendor")
    blocked = Task.objects.get(title="Call the vendor")
    services.task_block(task=blocked, actor=owner, reason="waiting on their answer", blocked_type_id=vendor.pk)
    document = export(api, source)
    rows = {t["title"]: t for t in document["workflows"][0]["tasks"]}
    assert rows["Call the vendor"]["blocked_type"] == "Vendor"
    rows["Plan the release"].update(blocked_reason="no budget", blocked_type="Budget")
    rows["Ship v2"].update(blocked_type="Vendor")  # no block: no type
    elsewhere = factories.WorkspaceFactory()
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.OWNER)
    there = blocker_types.blocker_type_create(workspace_id=elsewhere.pk, actor=owner, name="vendor")
    response = import_(api, elsewhere, renamed(document))
    assert response.status_code == 201, response.json()
    copy = Workflow.objects.get(pk=response.json()["workflows"][0]["id"])
    made = {t.title: t for t in Task.objects.filter(workflow=copy).select_related("blocked_type")}
    assert made["Call the vendor"].blocked_type == there  # matched without case
    assert made["Plan the release"].blocked_type.name == "Budget"  # made in the workspace
    assert made["Ship v2"].blocked_type is None
    assert sorted(BlockerType.objects.filter(workspace=elsewhere).values_list("name", flat=True)) == [
        "Budget",
        "vendor",
    ]
    # The restored history's block names its type, found by name in this workspace.
    event = TaskEvent.objects.filter(task_id=made["Call the vendor"].pk, kind=EventKind.BLOCKED).latest("at", "id")
    assert (event.detail["type"], event.detail["type_id"]) == ("Vendor", str(there.pk))
    rows["Plan the release"]["blocked_type"] = "x" * 61
    refused = import_(api, elsewhere, renamed(document, "Again"))
    assert refused.status_code == 400 and "workflows[0].tasks[0].blocked_type" in refused.json()["errors"]


def test_an_import_past_the_blocker_type_quota_is_refused_whole(api, source, owner):
    document = export(api, source)
    rows = {t["title"]: t for t in document["workflows"][0]["tasks"]}
    rows["Plan the release"].update(blocked_reason="no budget", blocked_type="Budget")
    elsewhere = factories.WorkspaceFactory()
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.OWNER)
    BlockerType.objects.bulk_create(
        BlockerType(workspace=elsewhere, name=f"type {i}") for i in range(BLOCKER_TYPES_PER_WORKSPACE_MAX)
    )
    refused = import_(api, elsewhere, renamed(document))
    assert refused.status_code == 400
    assert refused.json()["errors"] == {
        "blocked_type": [f"A workspace has at most {BLOCKER_TYPES_PER_WORKSPACE_MAX} blocker types."]
    }
    assert not Workflow.objects.filter(workspace=elsewhere).exists()
    assert BlockerType.objects.filter(workspace=elsewhere).count() == BLOCKER_TYPES_PER_WORKSPACE_MAX


def test_comments_of_people_who_are_not_members_name_them_in_the_body(api, source, owner):
    document = renamed(export(api, source))
    other = factories.WorkspaceFactory(name="Elsewhere")
    MembershipFactory(workspace=other, user=owner, role=Role.OWNER)

    response = import_(api, other, document)

    assert response.status_code == 201, response.json()
    comment = Comment.objects.get(workflow_id=response.json()["workflows"][0]["id"])
    assert (comment.author, comment.body) == (None, "**ada** wrote:\n\nWhich **date**, @olivia?")
    assert list(comment.mentions.values_list("username", flat=True)) == ["olivia"]


@pytest.mark.parametrize(
    ("comments", "field"),
    [
        ("not a list", "comments"),
        ([{"body": ""}], "comments[0].body"),
        ([{"body": "x" * 10_001}], "comments[0].body"),
        (["text"], "comments[0]"),
        ([{"body": "ok", "created_at": "yesterday"}], "comments[0].created_at"),
    ],
)
def test_bad_comments_are_400s_naming_the_field_and_nothing_is_written(api, source, comments, field):
    document = renamed(export(api, source))
    document["workflows"][0]["tasks"][0]["comments"] = comments
    before = Comment.objects.count()

    response = import_(api, source.workspace, document)

    assert response.status_code == 400
    assert list(response.json()["errors"]) == [f"workflows[0].tasks[0].{field}"]
    assert Comment.objects.count() == before


def test_people_limits_go_to_members_who_have_none(api, source, owner):
    Membership.objects.filter(workspace=source.workspace, user__username="ada").update(wip_limit=3)
    Membership.objects.filter(workspace=source.workspace, user=owner).update(wip_limit=5)
    document = renamed(export(api, source))
    assert document["people"] == [{"username": "ada", "wip_limit": 3}, {"username": "olivia", "wip_limit": 5}]
    document["people"].append({"username": "grace", "wip_limit": 2})
    elsewhere = factories.WorkspaceFactory()
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.OWNER, wip_limit=4)  # has one: kept
    grace = UserFactory(username="grace")
    MembershipFactory(workspace=elsewhere, user=grace, role=Role.MEMBER)  # none: given the backup's

    response = import_(api, elsewhere, document)

    assert response.status_code == 201, response.json()
    assert response.json()["people"] == {"applied": ["grace"], "kept": ["olivia"], "skipped": ["ada"]}
    limits = dict(Membership.objects.filter(workspace=elsewhere).values_list("user__username", "wip_limit"))
    assert limits == {"olivia": 4, "grace": 2}
    change = ConfigChange.objects.get(workspace_id=elsewhere.pk, scope=LimitScope.PERSON)
    assert (change.actor, change.field, change.before, change.after) == (owner, "wip_limit", 0, 2)


@pytest.mark.parametrize(
    ("people", "field"),
    [
        ("everyone", "people"),
        ([{"wip_limit": 2}], "people[0].username"),
        ([{"username": "a", "wip_limit": -1}], "people[0].wip_limit"),
    ],
)
def test_bad_people_are_400s_and_nothing_is_written(api, source, people, field):
    document = renamed(export(api, source))
    document["people"] = people
    response = import_(api, source.workspace, document)
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]
    assert not Workflow.objects.filter(name="Restored").exists()


def test_a_workspace_export_carries_every_board_and_imports_whole(api, source, owner):
    factories.board(factories.WorkflowFactory(workspace=source.workspace, name="Support"))
    response = api.get(f"/api/v1/workspaces/{source.workspace_id}/export/?format=json")
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{source.workspace.slug}.json"'
    document = json.loads(response.content)
    assert [(w["name"], len(w["tasks"])) for w in document["workflows"]] == [("Delivery", 8), ("Support", 0)]
    elsewhere = factories.WorkspaceFactory()
    MembershipFactory(workspace=elsewhere, user=owner, role=Role.OWNER)
    MembershipFactory(workspace=elsewhere, user=Membership.objects.get(user__username="ada").user, role=Role.MEMBER)

    broken = json.loads(response.content)
    broken["workflows"][1]["steps"][0]["wip_limit"] = -1
    assert import_(api, elsewhere, broken).status_code == 400
    assert not Workflow.objects.filter(workspace=elsewhere).exists()  # all or nothing

    response = import_(api, elsewhere, document)
    assert response.status_code == 201, response.json()
    assert [w["name"] for w in response.json()["workflows"]] == ["Delivery", "Support"]
    for copy, original in zip(
        Workflow.objects.filter(workspace=elsewhere).order_by("name"), ("Delivery", "Support"), strict=True
    ):
        assert export_tasks(copy) == export_tasks(Workflow.objects.get(workspace=source.workspace, name=original))
