"""A task's checklist: items added, ticked, edited, reordered and deleted, each in a change
of the task's board, so its card's "done/total" (`Task.checklist`, counted again in the same
transaction) reaches every viewer with the board's next version."""

from django.db.models import Count, Q
from django.http import Http404

from boards.changes import task_change
from boards.locking import NotFound, board_transaction
from boards.models import CHECKLIST_ITEMS_MAX, ChecklistItem, Task
from common.errors import Conflict, Invalid
from common.validation import parse_uuid
from workflows.access import check_role, role_in, visible


def writable_item(user, pk) -> ChecklistItem:
    """A checklist item for a write: 404 unless `user` is a member of its workspace (also for
    a malformed id), 403 for a viewer."""
    try:
        pk = parse_uuid(pk, "id")
    except Invalid:
        raise Http404 from None
    items = visible(ChecklistItem.objects.select_related("task__workflow"), user, "task__workflow__workspace")
    item = items.filter(pk=pk).first()
    if item is None:
        raise Http404
    check_role(role_in(user, item.task.workflow.workspace_id), write=True)
    return item


@board_transaction
def checklist_add(*, task: Task, actor, text: str) -> ChecklistItem:
    """A new item, last and not done."""
    with task_change(task, actor=actor) as (change, task):
        total = task.checklist_items.count()
        if total >= CHECKLIST_ITEMS_MAX:
            raise Conflict(f"A checklist has at most {CHECKLIST_ITEMS_MAX} items.", code="too_many_items")
        item = ChecklistItem.objects.create(task=task, text=text, position=total)
        _recount(change, task)
        return item


@board_transaction
def checklist_update(*, item: ChecklistItem, actor, position: int | None = None, **fields) -> ChecklistItem:
    """Tick or untick an item, edit its text, or move it to index `position` (0 = first) of
    the list, the others keeping their order."""
    with task_change(item.task, actor=actor) as (change, task):
        items = list(task.checklist_items.select_for_update())
        item = next((i for i in items if i.pk == item.pk), None)
        if item is None:  # deleted meanwhile
            raise NotFound("Not found.")
        if fields:
            for name, value in fields.items():
                setattr(item, name, value)
            item.save(update_fields=list(fields))
        if position is not None:
            items.remove(item)
            items.insert(min(position, len(items)), item)
            _renumber(items)
        _recount(change, task)
        return item


@board_transaction
def checklist_delete(*, item: ChecklistItem, actor) -> None:
    with task_change(item.task, actor=actor) as (change, task):
        ChecklistItem.objects.filter(pk=item.pk).delete()
        _renumber(list(task.checklist_items.select_for_update()))
        _recount(change, task)


def _renumber(items: list[ChecklistItem]) -> None:
    """Positions 0..n-1 in the list's order (a checklist is short: at most its bound)."""
    moved = []
    for index, item in enumerate(items):
        if item.position != index:
            item.position = index
            moved.append(item)
    ChecklistItem.objects.bulk_update(moved, ["position"])


def _recount(change, task: Task) -> None:
    """The card's figures from the items as they are now, and the card to every viewer."""
    counts = task.checklist_items.aggregate(total=Count("id"), done=Count("id", filter=Q(done=True)))
    task.checklist = {"done": counts["done"], "total": counts["total"]}
    task.updated_at = change.now
    task.save(update_fields=["checklist", "updated_at"])
    change.record.changed(task, change.steps[task.step_id])
    change.record.announce("task.updated", task=task)
