"""Importing work: a CSV file (boards/csv_import.py) and a Trello board's JSON export
(boards/trello.py), admitted through the one admission rule, with a dry run that writes nothing."""

import datetime
import json
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from boards import blocker_types
from boards.admission import task_create
from boards.models import EventKind, Label, Priority, Task, TaskEvent
from common.errors import WipLimitReached
from tests import factories
from tests.concurrency import race, rounds
from tests.conftest import board_state, member_client
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import OnFull, Role, StepKind, Workflow

pytestmark = pytest.mark.django_db

TRELLO = json.loads((Path(__file__).parent / "fixtures" / "trello_board.json").read_text())

CSV = """title,description,step,priority,assignee,due
Plan the launch,"Two lines,
with a comma",Backlog,high,olivia,2025-01-01
Write the post,,Doing,,,
Old idea,,Backlog,low,,
"""


def post_csv(client, workspace, body, query=""):
    return client.post(
        f"/api/v1/workspaces/{workspace.pk}/import/csv/{query}", data=body.encode(), content_type="text/csv"
    )


def post_trello(client, workspace, document, query=""):
    return client.post(
        f"/api/v1/workspaces/{workspace.pk}/import/trello/{query}",
        data=json.dumps(document),
        content_type="application/json",
    )


class TestCSV:
    def test_a_file_becomes_a_board_with_its_steps_in_order_of_appearance(self, api, workflow, owner):
        response = post_csv(api, workflow.workspace, CSV, "?name=Launch")
        assert response.status_code == 201, response.json()
        body = response.json()
        assert {k: body[k] for k in ("created", "queued", "refused", "dry_run", "skipped_columns")} == {
            "created": 3,
            "queued": 0,
            "refused": [],
            "dry_run": False,
            "skipped_columns": ["due"],
        }
        board = Workflow.objects.get(pk=body["workflow_id"])
        assert board.name == "Launch"
        steps = list(board.steps.order_by("position"))
        assert [(s.name, s.kind, s.is_start_step) for s in steps] == [
            ("Backlog", StepKind.BACKLOG, True),
            ("Doing", StepKind.DONE, False),
        ]
        plan = Task.objects.get(workflow=board, title="Plan the launch")
        assert (plan.description, plan.priority, plan.assignee) == ("Two lines,\nwith a comma", Priority.HIGH, owner)
        assert [t.title for t in Task.objects.filter(step=steps[0]).in_board_order()] == ["Plan the launch", "Old idea"]

    def test_a_blocked_type_column_finds_or_makes_the_type(self, api, workflow, owner):
        vendor = blocker_types.blocker_type_create(workspace_id=workflow.workspace_id, actor=owner, name="Vendor")
        body = "title,blocked_reason,blocked_type\nA,waiting,vendor\nB,no budget,Budget\nC,,Budget\n"
        response = post_csv(api, workflow.workspace, body, "?name=Blocked")
        assert response.status_code == 201, response.json()
        made = {t.title: t.blocked_type for t in Task.objects.filter(workflow_id=response.json()["workflow_id"])}
        assert made["A"] == vendor and made["B"].name == "Budget" and made["C"] is None

    def test_a_dry_run_answers_the_same_and_writes_nothing(self, api, workflow):
        before = (Workflow.objects.count(), Task.objects.count(), TaskEvent.objects.count())
        response = post_csv(api, workflow.workspace, CSV, "?dry_run=1")
        assert response.status_code == 200
        assert {k: response.json()[k] for k in ("workflow_id", "created", "dry_run")} == {
            "workflow_id": None,
            "created": 3,
            "dry_run": True,
        }
        assert (Workflow.objects.count(), Task.objects.count(), TaskEvent.objects.count()) == before

    def test_rows_with_errors_are_named_by_their_line_and_nothing_is_written(self, api, workflow):
        body = "Title,Priority,Assignee,Archived\nGood,,,\n,high,,\nBad priority,urgent,nobody,maybe\n"
        before = Workflow.objects.count()
        for query in ("", "?dry_run=1"):
            response = post_csv(api, workflow.workspace, body, query)
            assert response.status_code == 400
            assert response.json()["errors"] == {
                "rows[3].title": ["This field may not be blank."],
                "rows[4].priority": ["Must be one of critical, high, medium, low, none."],
                "rows[4].assignee": ['"nobody": Not a member or owner of this workspace.'],
                "rows[4].archived": ["Must be yes or no."],
            }
        assert Workflow.objects.count() == before

    @pytest.mark.parametrize(
        ("body", "error"),
        [
            ("description\nno title column\n", "The first line must be a header with a title column."),
            ("title,name\nx,y\n", "Columns named twice: title."),
            (b"title\n\xff\n", "The file is not UTF-8 text (byte 6)."),
            ('title\n"never closed\n', None),
        ],
    )
    def test_files_that_are_no_task_table_are_400(self, api, workflow, body, error):
        data = body if isinstance(body, bytes) else body.encode()
        url = f"/api/v1/workspaces/{workflow.workspace.pk}/import/csv/"
        response = api.post(url, data=data, content_type="text/csv")
        assert response.status_code == 400
        assert "file" in response.json()["errors"]
        if error:
            assert response.json()["errors"]["file"] == [error]

    def test_row_count_and_size_are_bounded(self, api, workflow, settings):
        settings.KANDEV_MAX_IMPORT_TASKS = 2
        response = post_csv(api, workflow.workspace, CSV)
        assert response.status_code == 400
        assert response.json()["errors"] == {"file": ["An import brings at most 2 tasks; this one has 3."]}
        settings.KANDEV_MAX_IMPORT_BYTES = 50
        assert post_csv(api, workflow.workspace, CSV).status_code == 413

    def test_into_an_existing_board_full_steps_refuse_or_queue_row_by_row(self, api, workflow, board, make_task):
        backlog, doing, done = board  # In Progress: limit 2, pulls from Backlog
        done.wip_limit, done.on_full = 1, OnFull.QUEUE
        done.save(update_fields=["wip_limit", "on_full"])
        make_task(doing, "already in progress")
        body = "title,step\nOne,In Progress\nTwo,in progress\nThree,Done\nFour,Done\nFive,\n"
        response = post_csv(api, workflow.workspace, body, f"?workflow={workflow.pk}")
        assert response.status_code == 201
        assert {k: response.json()[k] for k in ("workflow_id", "created", "queued", "refused")} == {
            "workflow_id": str(workflow.pk),
            "created": 3,  # One, Three and Five (into the start step, Backlog)
            "queued": 1,  # Four: Done is full and queues
            "refused": [{"row": 3, "reason": 'Step "In Progress" is at its WIP limit (2 of 2).'}],
        }
        assert not Task.objects.filter(title="Two").exists()
        assert Task.objects.get(title="Five").step == backlog
        assert TaskEvent.objects.filter(task__title="Four", kind=EventKind.QUEUED).exists()

    def test_unknown_steps_of_an_existing_board_are_row_errors(self, api, workflow, board):
        response = post_csv(api, workflow.workspace, "title,step\nx,Nowhere\n", f"?workflow={workflow.pk}")
        assert response.status_code == 400
        assert response.json()["errors"] == {"rows[2].step": ['The board has no step "Nowhere".']}

    def test_another_workspaces_board_is_no_such_workflow(self, api, workflow):
        elsewhere = factories.WorkflowFactory()
        response = post_csv(api, workflow.workspace, "title\nx\n", f"?workflow={elsewhere.pk}")
        assert response.status_code == 400
        assert response.json()["errors"] == {"workflow": ["No such workflow."]}

    def test_viewers_get_403_non_members_404_and_anonymous_401(self, workflow):
        assert post_csv(member_client(workflow.workspace, Role.VIEWER), workflow.workspace, CSV).status_code == 403
        stranger = APIClient()
        stranger.force_authenticate(UserFactory())
        assert post_csv(stranger, workflow.workspace, CSV).status_code == 404
        assert post_csv(APIClient(), workflow.workspace, CSV).status_code == 401


class TestTrello:
    def test_lists_become_steps_and_cards_tasks_in_their_order(self, api, workflow):
        response = post_trello(api, workflow.workspace, TRELLO)
        assert response.status_code == 201, response.json()
        body = response.json()
        assert {k: body[k] for k in ("created", "queued", "archived", "refused", "skipped")} == {
            "created": 4,
            "queued": 0,
            "archived": 2,
            "refused": [],
            "skipped": {
                "attachments": 1,
                "members": 1,
                "closed_lists": 1,
            },
        }
        board = Workflow.objects.get(pk=body["workflow_id"])
        assert board.name == "Website"
        steps = list(board.steps.order_by("position"))
        assert [(s.name, s.kind) for s in steps] == [
            ("To Do", StepKind.BACKLOG),
            ("Doing", StepKind.ACTIVE),
            ("Done", StepKind.DONE),
        ]
        live = [(t.step.name, t.title) for t in Task.objects.live().filter(workflow=board).in_board_order()]
        assert sorted(live, key=lambda x: [s.name for s in steps].index(x[0])) == [
            ("To Do", "Write the onboarding guide"),
            ("To Do", "Fix the login bug"),
            ("Doing", "Design the settings page"),
            ("Done", "Release 1.0"),
        ]
        bug = Task.objects.get(workflow=board, title="Fix the login bug")
        assert bug.description.startswith("Steps to reproduce:\n1. Open the page")
        # Labels, the due date and checklists come along.
        labels = {label.name: label.color for label in Label.objects.filter(workspace=workflow.workspace)}
        assert labels == {"bug": "red", "design": "blue"}
        assert [label.name for label in bug.labels.all()] == ["bug"]
        assert (bug.due_at.isoformat(), bug.due_all_day) == ("2024-06-01T12:00:00+00:00", False)
        guide = Task.objects.get(workflow=board, title="Write the onboarding guide")
        assert [(i.text, i.done) for i in guide.checklist_items.all()] == [("Install", True), ("First board", False)]
        assert guide.checklist == {"done": 1, "total": 2}
        # Its comment: Grace is no member here, so the text names her
        assert bug.comment_count == 1
        assert list(bug.comments.values_list("author", "body", "created_at")) == [
            (
                None,
                "**grace** wrote:\n\nCan reproduce on Firefox.",
                datetime.datetime(2024, 5, 2, 10, tzinfo=datetime.UTC),
            )
        ]
        archived = set(Task.objects.filter(workflow=board, archived_at__isnull=False).values_list("title", flat=True))
        assert archived == {"Abandoned spike", "Dark mode?"}

    def test_a_dry_run_writes_nothing(self, api, workflow):
        before = (Workflow.objects.count(), Task.objects.count())
        response = post_trello(api, workflow.workspace, TRELLO, "?dry_run=1&name=Preview")
        assert response.status_code == 200
        assert (response.json()["workflow_id"], response.json()["created"]) == (None, 4)
        assert (Workflow.objects.count(), Task.objects.count()) == before

    def test_what_is_not_a_trello_board_is_400_naming_the_cards(self, api, workflow):
        assert post_trello(api, workflow.workspace, {"name": "x"}).status_code == 400
        assert post_trello(api, workflow.workspace, [1, 2]).status_code == 400
        broken = {**TRELLO, "cards": [{**TRELLO["cards"][0], "idList": "elsewhere"}, TRELLO["cards"][1]]}
        response = post_trello(api, workflow.workspace, broken)
        assert response.status_code == 400
        assert response.json()["errors"] == {"cards[0].idList": ["Not a list of this board."]}
        broken = {**TRELLO, "cards": [{**TRELLO["cards"][1], "name": "x" * 501}]}
        response = post_trello(api, workflow.workspace, broken)
        assert response.json()["errors"] == {"cards[0].title": ["Ensure this field has no more than 500 characters."]}

    def test_the_card_count_is_bounded(self, api, workflow, settings):
        settings.KANDEV_MAX_IMPORT_TASKS = 3
        response = post_trello(api, workflow.workspace, TRELLO)
        assert response.status_code == 400
        assert response.json()["errors"] == {"cards": ["An import brings at most 3 tasks; this one has 6."]}


@pytest.mark.django_db(transaction=True)
@rounds(5)
def test_an_import_racing_creates_into_a_limited_step_keeps_the_limit():
    """Eight API creates and one CSV import of eight rows, all into a step with room for
    three: exactly three are admitted, and every other row and create is refused."""
    workspace = WorkspaceFactory()
    owner = UserFactory()
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER)
    _, doing, _ = factories.board(workspace=workspace, active={"In Progress": 3}, pulls="none")
    client = APIClient()
    client.force_authenticate(owner)
    rows = "title,step\n" + "".join(f"row {i},In Progress\n" for i in range(8))

    def act(i):
        if i == 0:
            return post_csv(client, workspace, rows, f"?workflow={doing.workflow_id}").json()
        return task_create(workflow=doing.workflow, step=doing, actor=owner, title=f"create {i}")

    results = race(9, act)
    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, WipLimitReached)]
    assert not errors, errors
    imported = results[0]
    created = sum(1 for r in results[1:] if not isinstance(r, Exception))
    assert imported["created"] + created == 3
    assert len(imported["refused"]) == 8 - imported["created"]
    assert Task.objects.occupying().filter(step=doing).count() == 3
    assert board_state(doing.workflow)[0] == 3
