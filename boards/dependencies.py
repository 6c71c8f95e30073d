"""Which of a task's blockers are unfinished, kept on the task's own row (`Task.blocked_by`).

A link (`TaskLink`, written by boards/links.py) says a blocker blocks a dependent: while the
blocker is unfinished (`UNFINISHED`: not archived, not in a `done` step; deleting it deletes
its links), the dependent is never a pull candidate (the "dependency" bar of
boards/pullable.py). A card, the API and the pull read the blockers from the dependent's row,
with no query of their own; every change that can alter them keeps them, in its own
transaction:
- a link added or removed: the change of the dependent's board that writes the link;
- a blocker finished or reopened (a `done` step entered or left, archived, restored, deleted):
  the change that did it follows its dependents (`follow()`, run by `pull.settle()` before
  each fill). On its own board at once, so a dependent it frees there is pulled in the same
  change; on another board of the workspace right after commit, in that board's own change
  (`changes.refresh_boards`): two boards are never locked at once. The reconciler refreshes
  every board's (`mark_board()`), the backup for a crash in between.
"""

from django.db.models import Q

from boards.models import UNFINISHED, Task, TaskLink, unfinished
from common import sql


def _over(path: str, q: Q) -> Q:
    """`q` (a rule over Task) over the task at `path` of another model."""
    children = [_over(path, c) if isinstance(c, Q) else (f"{path}__{c[0]}", c[1]) for c in q.children]
    return Q(*children, _connector=q.connector, _negated=q.negated)


def blockers_of(task_ids) -> dict:
    """{task id: the ids (text, ascending) of its unfinished blockers} of these tasks, read
    from their links: what `Task.blocked_by` keeps."""
    rows = TaskLink.objects.filter(_over("blocker", UNFINISHED), dependent_id__in=task_ids)
    found = {pk: [] for pk in task_ids}
    for dependent_id, blocker_id in rows.values_list("dependent_id", "blocker_id"):
        found[dependent_id].append(str(blocker_id))
    return {pk: sorted(ids) for pk, ids in found.items()}


def follow(change) -> None:
    """The dependents of the tasks this change finished or reopened (`record.finishing`), and
    the ones marked already (`worklist.dependents`): those on this board get their blockers
    now (a dependent freed is pullable: its consumers fill); other boards are left to after
    commit (`worklist.elsewhere`). No query when neither has any."""
    if change.record.finishing:
        finishing, change.record.finishing = change.record.finishing, set()
        _route(change, TaskLink.objects.filter(blocker_id__in=finishing))
    if change.worklist.dependents:
        ids, change.worklist.dependents = change.worklist.dependents, set()
        _refresh(change, ids)


def forget(change, task: Task) -> None:
    """`task` is about to be deleted, its links with it: an unfinished blocker's dependents
    lose it (followed when the change settles)."""
    if unfinished(task, change.steps[task.step_id]):
        _route(change, TaskLink.objects.filter(blocker=task))


def mark_board(change, task_ids=None) -> None:
    """Have the change refresh `task_ids` of its board (None: every task that has a blocker or
    lists one), as the follow-up of a change on another board and as the reconciler's pass."""
    if task_ids is None:
        linked = TaskLink.objects.filter(dependent__workflow=change.workflow).values_list("dependent_id", flat=True)
        listed = Task.objects.filter(workflow=change.workflow).exclude(blocked_by=[]).values_list("pk", flat=True)
        task_ids = {*linked, *listed}
    change.worklist.dependents.update(task_ids)


def _route(change, links) -> None:
    for dependent_id, workflow_id in links.values_list("dependent_id", "dependent__workflow_id"):
        if workflow_id == change.workflow.pk:
            change.worklist.dependents.add(dependent_id)
        else:
            elsewhere = change.worklist.elsewhere
            elsewhere[workflow_id] = elsewhere.get(workflow_id, set()) | {dependent_id}


def _refresh(change, ids) -> None:
    """Give each of these tasks of the board its unfinished blockers; a task left with none is
    pullable again, so the steps it feeds fill."""
    ids = set(ids) - change.record.deleted
    truth = blockers_of(ids)
    for task in _locked(change, ids):
        now = truth[task.pk]
        if task.blocked_by == now:
            continue
        freed = not now
        task.blocked_by = now
        sql.update(task, ["blocked_by"])
        step = change.steps[task.step_id]
        change.record.changed(task, step)
        change.record.announce("task.updated", task=task)
        if freed:
            change.worklist.arrived(step)


def _locked(change, ids) -> list[Task]:
    """The tasks `ids` of the change's board: the change's own instance of a task it wrote,
    the others' rows locked now (step 3 of the lock order, ascending id)."""
    own = [change.record.tasks[pk] for pk in ids if pk in change.record.tasks]
    rest = ids - change.record.tasks.keys()
    if rest:
        rows = Task.objects.select_for_update().filter(pk__in=rest, workflow=change.workflow).order_by("pk")
        own += list(rows)
    return own


def blockers_named(task: Task) -> list[dict]:
    """The task's unfinished blockers, named (what its `waiting` says holds it back)."""
    rows = Task.objects.filter(pk__in=task.blocked_by).order_by("title", "id")
    return [{"id": str(t.pk), "title": t.title, "workflow_id": str(t.workflow_id)} for t in rows]
