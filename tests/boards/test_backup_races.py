"""A backup's import racing a label made at the same moment in the workspace it goes to:
one name per workspace and the workspace's label quota hold (real threads)."""

import pytest

from boards import labels
from boards.backup import backup_import
from boards.models import LABELS_PER_WORKSPACE_MAX, Label, Task
from common.errors import Conflict, Invalid
from tests.concurrency import race, rounds
from tests.factories import MembershipFactory, UserFactory, WorkflowFactory, WorkspaceFactory
from workflows.models import Role

pytestmark = pytest.mark.django_db(transaction=True)


def document(label: str) -> dict:
    steps = [{"name": "Backlog", "position": 0}, {"name": "Done", "position": 1, "kind": "done"}]
    task = {"title": "Triage the inbox", "step_position": 0, "labels": [{"name": label, "color": "red"}]}
    return {
        "version": 3,
        "type": "kandev_workflow",
        "workflows": [{"name": "Restored", "steps": steps, "tasks": [task]}],
    }


def workspace_with(*, boards: int, labels_made: int = 0):
    workspace = WorkspaceFactory()
    owner = UserFactory()
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER)
    for _ in range(boards):
        WorkflowFactory(workspace=workspace)
    Label.objects.bulk_create(Label(workspace=workspace, name=f"label {i}") for i in range(labels_made))
    return workspace, owner


@pytest.mark.parametrize("boards", [0, 1])
@rounds(4)
def test_an_import_and_a_create_of_one_label_name_make_one_label(boards):
    workspace, owner = workspace_with(boards=boards)

    def act(i):
        if i == 0:
            return backup_import(workspace=workspace, document=document("Bug"), actor=owner)
        return labels.label_create(workspace_id=workspace.pk, actor=owner, name="bug", color="blue")

    imported, created = race(2, act)

    assert not isinstance(imported, Exception), imported  # a name made meanwhile is the import's too
    [label] = Label.objects.filter(workspace=workspace, name__iexact="bug")
    assert isinstance(created, Label) or (
        isinstance(created, Invalid) and created.extra["errors"] == {"name": [labels.NAME_TAKEN]}
    )
    task = Task.objects.get(workflow__workspace=workspace, title="Triage the inbox")
    assert task.label_ids == [str(label.pk)]


@pytest.mark.parametrize("boards", [0, 1])
@rounds(4)
def test_an_import_and_a_create_never_pass_the_label_quota_together(boards):
    workspace, owner = workspace_with(boards=boards, labels_made=LABELS_PER_WORKSPACE_MAX - 1)

    def act(i):
        if i == 0:
            return backup_import(workspace=workspace, document=document("Bug"), actor=owner)
        return labels.label_create(workspace_id=workspace.pk, actor=owner, name="Docs", color="blue")

    imported, created = race(2, act)

    assert Label.objects.filter(workspace=workspace).count() == LABELS_PER_WORKSPACE_MAX
    if isinstance(created, Label):  # the create came first: the import is refused whole
        assert isinstance(imported, Invalid) and "labels" in imported.extra["errors"], imported
        assert not Task.objects.filter(workflow__workspace=workspace).exists()
    else:
        assert isinstance(created, Conflict) and created.code == "too_many_labels", created
        assert not isinstance(imported, Exception), imported
