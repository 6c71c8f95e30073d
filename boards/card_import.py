"""A card's labels, due date and checklist in documents: written into an export's task rows
and read back from an import's (a kandev backup, a Trello board).

In a task row, `labels` is a list of labels, each a name or {"name", "color"}; `due_at` is a
date ("2026-12-05": due that whole day) or a moment with its offset; `checklist` is a list of
items, each a text or {"text", "done"}. An import finds each label in the workspace by name
(without case) or creates it, so a backup brought to another workspace keeps its labels.
"""

import datetime

from boards.card_serializers import parse_due
from boards.change import BoardChange
from boards.changes import made_by_name
from boards.messages import label_data
from boards.models import (
    CHECKLIST_ITEMS_MAX,
    CHECKLIST_TEXT_MAX,
    LABEL_NAME_MAX,
    LABELS_PER_TASK_MAX,
    LABELS_PER_WORKSPACE_MAX,
    ChecklistItem,
    Label,
    LabelColor,
    Task,
)


def card_fields_row(task: Task, labels: dict) -> dict:
    """The export's fields of `task`; `labels` is {id: Label} of its workspace."""
    if task.due_at is None:
        due = None
    else:
        due = task.due_at.date().isoformat() if task.due_all_day else task.due_at.isoformat()
    carried = [labels[pk] for pk in task.label_ids if pk in labels]
    return {
        "labels": [{"name": label.name, "color": label.color} for label in sorted(carried, key=lambda x: x.name)],
        "due_at": due,
        "checklist": [{"text": item.text, "done": item.done} for item in task.checklist_items.all()],
    }


def read_card_fields(reader, row: str, values: dict) -> dict:
    """An import row's labels, due date and checklist as ImportedTask fields; each mistake is
    recorded with `reader.error` under the row's path."""
    return {
        **_due(reader, row, values.get("due_at")),
        "labels": _labels(reader, row, values.get("labels")),
        "checklist": _checklist(reader, row, values.get("checklist")),
    }


def _due(reader, row: str, value) -> dict:
    if value in (None, ""):
        return {}
    if isinstance(value, datetime.datetime):  # YAML reads an unquoted moment as one
        value = value.isoformat()
    elif isinstance(value, datetime.date):  # and an unquoted date as one
        value = value.isoformat()
    try:
        if not isinstance(value, str) or len(value) > 40:
            raise ValueError(value)
        due_at, all_day = parse_due(value)
    except ValueError:
        reader.error(f"{row}.due_at", 'A date ("2026-12-05") or a moment with its offset.')
        return {}
    return {"due_at": due_at, "due_all_day": all_day}


def _labels(reader, row: str, value) -> list[tuple[str, str]]:
    if value in (None, ""):
        return []
    if not isinstance(value, list) or len(value) > LABELS_PER_TASK_MAX:
        reader.error(f"{row}.labels", f"Must be a list of at most {LABELS_PER_TASK_MAX} labels.")
        return []
    labels = []
    for i, label in enumerate(value):
        name, color = (label, LabelColor.GRAY) if isinstance(label, str) else _pair(label, "name", "color")
        if color not in LabelColor.values:
            color = LabelColor.GRAY  # a colour kandev has no name for reads as gray
        name = reader._text(f"{row}.labels[{i}]", "name", name, LABEL_NAME_MAX, required=True)
        if name:
            labels.append((name, color))
    return labels


def _checklist(reader, row: str, value) -> list[tuple[str, bool]]:
    if value in (None, ""):
        return []
    if not isinstance(value, list) or len(value) > CHECKLIST_ITEMS_MAX:
        reader.error(f"{row}.checklist", f"Must be a list of at most {CHECKLIST_ITEMS_MAX} items.")
        return []
    items = []
    for i, item in enumerate(value):
        text, done = (item, False) if isinstance(item, str) else _pair(item, "text", "done")
        if not isinstance(done, bool):
            reader.error(f"{row}.checklist[{i}].done", "Must be true or false.")
        text = reader._text(f"{row}.checklist[{i}]", "text", text, CHECKLIST_TEXT_MAX, required=True)
        if text:
            items.append((text, done is True))
    return items


def _pair(value, first: str, second: str) -> tuple:
    return (value.get(first), value.get(second)) if isinstance(value, dict) else (None, None)


def attach_card_fields(change: BoardChange, placed: list[tuple]) -> None:
    """Give the tasks just written (`placed`: [(ImportedTask, Task)]) their labels and
    checklists; their due dates went in with them."""
    wanted = {name.lower(): (name, color) for row, _ in placed for name, color in row.labels}
    if not wanted and not any(row.checklist for row, _ in placed):
        return
    labels = _workspace_labels(change, wanted)
    links, items, changed = [], [], []
    for row, task in placed:
        ids = sorted({str(labels[name.lower()].pk) for name, _ in row.labels})
        links += [Task.labels.through(task_id=task.pk, label_id=pk) for pk in ids]
        items += [
            ChecklistItem(task=task, text=text, done=done, position=i) for i, (text, done) in enumerate(row.checklist)
        ]
        if ids or row.checklist:
            task.label_ids = ids
            task.checklist = {"done": sum(done for _, done in row.checklist), "total": len(row.checklist)}
            changed.append(task)
    Task.labels.through.objects.bulk_create(links)
    ChecklistItem.objects.bulk_create(items)
    Task.objects.bulk_update(changed, ["label_ids", "checklist"])


def _workspace_labels(change: BoardChange, wanted: dict) -> dict:
    """{lowercase name: Label} of the workspace for the names `wanted` ({lowercase name:
    (name, color)}), making those it lacks; a label made here reaches every other board as a
    label change."""
    return made_by_name(
        change,
        Label,
        {key: {"name": name, "color": color} for key, (name, color) in wanted.items()},
        most=LABELS_PER_WORKSPACE_MAX,
        field="labels",
        message="label.updated",
        data=lambda made: {"label": label_data(made)},
    )
