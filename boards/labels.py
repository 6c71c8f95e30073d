"""A workspace's labels and the tasks that carry them.

A label is shown on every board of its workspace, so each change to one is a change of every
one of those boards, in one transaction: each board's version advances and its viewers get
`label.updated` (its new name or colour, or a new label) or `label.deleted` (with every task
of theirs that lost it), and no kept board snapshot shows the label as it was.
"""

from contextlib import ExitStack, contextmanager

from django.db import IntegrityError, transaction
from django.http import Http404

from boards.change import BoardChange
from boards.changes import board_change
from boards.locking import board_transaction
from boards.messages import label_data
from boards.models import LABELS_PER_TASK_MAX, LABELS_PER_WORKSPACE_MAX, EventKind, Label, Task
from common.errors import Conflict, Invalid
from common.validation import parse_uuid
from workflows.access import require_role, visible
from workflows.models import Workflow, Workspace

NAME_TAKEN = "A label with this name already exists in this workspace."


def member_label(user, pk) -> Label:
    """A label of a workspace `user` belongs to; to anyone else (and for a malformed id) a 404."""
    try:
        pk = parse_uuid(pk, "id")
    except Invalid:
        raise Http404 from None
    label = visible(Label.objects.all(), user, "workspace").filter(pk=pk).first()
    if label is None:
        raise Http404
    return label


def writable_workspace(user, workspace_id):
    """The workspace named in a new label's `workspace_id`: a 400 on that field unless `user`
    is a member (existence is not leaked), 403 for a viewer."""
    workspace = visible(Workspace.objects.all(), user, "").filter(pk=workspace_id).first()
    if workspace is None:
        raise Invalid({"workspace_id": ["No such workspace."]})
    require_role(user, workspace.pk, write=True)
    return workspace


@board_transaction
def label_create(*, workspace_id, actor, name: str, color: str) -> Label:
    with ExitStack() as boards:
        changes = _every_board(boards, workspace_id, actor)
        label_guard(workspace_id)
        labels = Label.objects.filter(workspace_id=workspace_id)
        if labels.count() >= LABELS_PER_WORKSPACE_MAX:
            raise Conflict(f"A workspace has at most {LABELS_PER_WORKSPACE_MAX} labels.", code="too_many_labels")
        _check_name(labels, name)
        with _one_name():
            label = Label.objects.create(workspace_id=workspace_id, name=name, color=color)
        _announce(changes, "label.updated", label=label_data(label))
        return label


@board_transaction
def label_update(*, label: Label, actor, **fields) -> Label:
    """Rename or recolour a label."""
    with ExitStack() as boards:
        changes = _every_board(boards, label.workspace_id, actor)
        label_guard(label.workspace_id)
        label = Label.objects.select_for_update().get(pk=label.pk)
        if "name" in fields:
            _check_name(Label.objects.filter(workspace_id=label.workspace_id).exclude(pk=label.pk), fields["name"])
        for name, value in fields.items():
            setattr(label, name, value)
        with _one_name():
            label.save(update_fields=list(fields))
        _announce(changes, "label.updated", label=label_data(label))
        return label


@board_transaction
def label_delete(*, label: Label, actor) -> None:
    """Delete a label: every task that carries it loses it, on every board at once."""
    with ExitStack() as boards:
        changes = _every_board(boards, label.workspace_id, actor)
        for change in changes:
            tasks = Task.objects.select_for_update().filter(workflow=change.workflow, labels=label).order_by("pk")
            for task in tasks:
                task.label_ids = [pk for pk in task.label_ids if pk != str(label.pk)]
                task.updated_at = change.now
                task.save(update_fields=["label_ids", "updated_at"])
                change.record.changed(task, change.steps[task.step_id])
        _announce(changes, "label.deleted", label_id=str(label.pk))
        Label.objects.filter(pk=label.pk).delete()


def relabel(change: BoardChange, task: Task, label_ids: list) -> None:
    """Give a task exactly these labels (of its workspace), in a change of its board; the
    history says which came and went. The board's lock orders this after any label change of
    the workspace, so a label found here is not deleted before this commits."""
    wanted = sorted({str(pk) for pk in label_ids})
    if len(wanted) > LABELS_PER_TASK_MAX:
        raise Invalid({"label_ids": [f"A task has at most {LABELS_PER_TASK_MAX} labels."]})
    found = set(
        Label.objects.filter(workspace_id=change.workflow.workspace_id, pk__in=wanted).values_list("pk", flat=True)
    )
    if len(found) < len(wanted):
        raise Invalid({"label_ids": ["No such label in this workspace."]})
    before = task.label_ids
    if wanted == before:
        return
    task.labels.set(wanted)
    task.label_ids = wanted
    added, removed = sorted(set(wanted) - set(before)), sorted(set(before) - set(wanted))
    change.record.event(task, EventKind.LABELED, label_ids=wanted, added=added, removed=removed)


def _every_board(boards: ExitStack, workspace_id, actor) -> list[BoardChange]:
    """A change of each board of the workspace, locked in id order (one lock order for
    every label change, so two of them never wait on each other in a circle)."""
    workflow_ids = Workflow.objects.filter(workspace_id=workspace_id).order_by("pk").values_list("pk", flat=True)
    return [boards.enter_context(board_change(pk, actor=actor)) for pk in workflow_ids]


def label_guard(workspace_id) -> None:
    """The workspace's row, locked after its boards: who makes or renames a label (a create, an
    import) counts and names them alone, so the quota and the one name without case hold
    also where a board made in the same transaction (an import's) is not yet seen by others."""
    Workspace.objects.select_for_update(no_key=True).filter(pk=workspace_id).first()


@contextmanager
def _one_name():
    """The name's uniqueness as the database holds it: a workspace without boards has no lock
    to order two labels given one name at once, and the second is refused as taken."""
    try:
        with transaction.atomic():
            yield
    except IntegrityError:
        raise Invalid({"name": [NAME_TAKEN]}) from None


def _check_name(labels, name: str) -> None:
    if labels.filter(name__iexact=name).exists():
        raise Invalid({"name": [NAME_TAKEN]})


def _announce(changes: list[BoardChange], type_: str, **payload) -> None:
    for change in changes:
        change.record.touch()
        change.record.announce(type_, **payload)
