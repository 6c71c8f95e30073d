"""A workspace's labels and the tasks that carry them.

A label is shown on every board of its workspace, so each change to one is a change of every
one of those boards, in one transaction: each board's version advances and its viewers get
`label.updated` (its new name or colour, or a new label) or `label.deleted` (with every task
of theirs that lost it), and no kept board snapshot shows the label as it was.
"""

from contextlib import ExitStack

from boards.change import BoardChange
from boards.changes import announce_everywhere, delete_everywhere, workspace_boards
from boards.locking import board_transaction
from boards.messages import label_data
from boards.models import LABELS_PER_TASK_MAX, LABELS_PER_WORKSPACE_MAX, EventKind, Label, Task
from common.errors import Conflict, Invalid
from common.validation import check_name_free, name_held

NAME_TAKEN = "A label with this name already exists in this workspace."


@board_transaction
def label_create(*, workspace_id, actor, name: str, color: str) -> Label:
    with ExitStack() as boards:
        changes = workspace_boards(boards, workspace_id, actor)
        labels = Label.objects.filter(workspace_id=workspace_id)
        if labels.count() >= LABELS_PER_WORKSPACE_MAX:
            raise Conflict(f"A workspace has at most {LABELS_PER_WORKSPACE_MAX} labels.", code="too_many_labels")
        check_name_free(labels, name, NAME_TAKEN)
        with name_held(NAME_TAKEN):
            label = Label.objects.create(workspace_id=workspace_id, name=name, color=color)
        announce_everywhere(changes, "label.updated", label=label_data(label))
        return label


@board_transaction
def label_update(*, label: Label, actor, **fields) -> Label:
    """Rename or recolour a label."""
    with ExitStack() as boards:
        changes = workspace_boards(boards, label.workspace_id, actor)
        label = Label.objects.select_for_update().get(pk=label.pk)
        if "name" in fields:
            check_name_free(
                Label.objects.filter(workspace_id=label.workspace_id).exclude(pk=label.pk), fields["name"], NAME_TAKEN
            )
        for name, value in fields.items():
            setattr(label, name, value)
        with name_held(NAME_TAKEN):
            label.save(update_fields=list(fields))
        announce_everywhere(changes, "label.updated", label=label_data(label))
        return label


@board_transaction
def label_delete(*, label: Label, actor) -> None:
    """Delete a label: every task that carries it loses it, on every board at once."""
    delete_everywhere(
        label,
        actor,
        held_by={"labels": label},
        without=lambda task: {"label_ids": [pk for pk in task.label_ids if pk != str(label.pk)]},
        message="label.deleted",
        label_id=str(label.pk),
    )


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
