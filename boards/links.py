"""Dependencies between tasks ("blocks / blocked by"): adding and removing a link.

A link joins two tasks of one workspace (their boards may differ): never a task to itself,
never twice, never a cycle. It is a change of the dependent's board: the dependent's
`blocked_by` (boards/dependencies.py) and its history (`linked`, `unlinked`) change there,
and its viewers see it live; the blocker's board is not locked.

Locks, for a new link: first the workspace's link guard (`statements.lock_links`), which only
link creations take and which they take before anything else, so two links created at once
are judged one after the other and never close a cycle together; then the dependent's board
as every change takes it (workflow, steps, the dependent's row); then the blocker's row
(FOR NO KEY UPDATE). A change that moves, archives or restores the blocker holds that row
from its start: either it commits first and the link reads the blocker as it left it, or
the link commits first and that change's `follow()` finds the link. Nobody who holds a
board's locks waits for the guard, and the link waits for the blocker's row without holding
anything the blocker's board takes, so neither order can deadlock. (A change of the kind of
the blocker's step locks no task row: one racing the link is mended by the reconciler.)
"""

from django.db.models import Q

from boards import statements
from boards.changes import board_change
from boards.locking import NotFound, board_transaction
from boards.models import EventKind, Task, TaskLink, unfinished
from common.errors import Invalid
from workflows.models import WorkflowStep

# The most blockers one task may have: a bound on what a card and a link check read.
MAX_BLOCKERS = 100


def link_data(link: TaskLink) -> dict:
    """A link as the API shows it, with both tasks named (read with `links_of()`)."""
    return {
        "id": str(link.pk),
        "blocker_id": str(link.blocker_id),
        "dependent_id": str(link.dependent_id),
        "blocker": _end(link.blocker),
        "dependent": _end(link.dependent),
        "created_by": link.created_by.username if link.created_by_id else None,
        "created_at": link.created_at.isoformat(),
    }


def _end(task: Task) -> dict:
    return {
        "id": str(task.pk),
        "title": task.title,
        "workflow_id": str(task.workflow_id),
        "step_id": str(task.step_id),
        "finished": not unfinished(task, task.step),
    }


def links_of(task: Task):
    """The task's links, as blocker and as dependent, oldest first, each with both tasks."""
    return (
        TaskLink.objects.filter(Q(blocker=task) | Q(dependent=task))
        .select_related("blocker__step", "dependent__step", "created_by")
        .order_by("created_at", "id")
    )


@board_transaction
def link_create(*, blocker: Task, dependent: Task, actor, field: str) -> TaskLink:
    """`blocker` blocks `dependent` from now on. `field` names the request's field that named
    the other task, for the 400s (a task of another workspace, itself, a duplicate, a cycle)."""
    workspace_id = dependent.workflow.workspace_id
    if blocker.workflow.workspace_id != workspace_id:
        raise Invalid({field: ["Not a task of this workspace."]})
    if blocker.pk == dependent.pk:
        raise Invalid({field: ["A task cannot block itself."]})
    statements.lock_links(workspace_id)
    with board_change(dependent.workflow_id, actor=actor) as change:
        dependent = change.board.lock_task(dependent.pk)
        # The row alone: locked with a join, a row whose step changes meanwhile drops out.
        blocker = Task.objects.select_for_update(no_key=True).filter(pk=blocker.pk).first()
        if blocker is None:  # deleted meanwhile
            raise Invalid({field: ["No such task."]})
        blocker.step = WorkflowStep.objects.get(pk=blocker.step_id)
        if TaskLink.objects.filter(blocker=blocker, dependent=dependent).exists():
            raise Invalid({field: ["These tasks are linked already."]})
        if TaskLink.objects.filter(dependent=dependent).count() >= MAX_BLOCKERS:
            raise Invalid({field: [f"A task may have at most {MAX_BLOCKERS} blockers."]})
        if _depends_on(blocker.pk, dependent.pk, workspace_id):
            raise Invalid({field: ["This link would make a cycle: the blocker already waits for this task."]})
        link = TaskLink.objects.create(blocker=blocker, dependent=dependent, created_by=actor)
        step = change.steps[dependent.step_id]
        change.record.event(
            dependent, EventKind.LINKED, action="link", link_id=str(link.pk), blocker_id=str(blocker.pk)
        )
        change.record.changed(dependent, step)
        change.record.announce("task.updated", task=dependent)
        change.worklist.dependents.add(dependent.pk)
    link.blocker, link.dependent = blocker, dependent
    dependent.step = change.steps[dependent.step_id]
    return link


def _depends_on(task_id, other_id, workspace_id) -> bool:
    """Is `task_id` blocked, through any chain of links of the workspace, by `other_id`?
    Read under the link guard, so no link being added meanwhile is missed."""
    blockers: dict = {}
    links = TaskLink.objects.filter(dependent__workflow__workspace_id=workspace_id)
    for blocker_id, dependent_id in links.values_list("blocker_id", "dependent_id"):
        blockers.setdefault(dependent_id, []).append(blocker_id)
    seen, todo = {task_id}, [task_id]
    while todo:
        for blocker_id in blockers.get(todo.pop(), ()):
            if blocker_id == other_id:
                return True
            if blocker_id not in seen:
                seen.add(blocker_id)
                todo.append(blocker_id)
    return False


@board_transaction
def link_delete(*, link: TaskLink, actor) -> None:
    """Remove a link: its dependent may be pullable again (its board fills in this change)."""
    with board_change(link.dependent.workflow_id, actor=actor) as change:
        dependent = change.board.lock_task(link.dependent_id)
        deleted, _ = TaskLink.objects.filter(pk=link.pk).delete()
        if not deleted:  # removed meanwhile
            raise NotFound("Not found.")
        step = change.steps[dependent.step_id]
        change.record.event(
            dependent, EventKind.UNLINKED, action="unlink", link_id=str(link.pk), blocker_id=str(link.blocker_id)
        )
        change.record.changed(dependent, step)
        change.record.announce("task.updated", task=dependent)
        change.worklist.dependents.add(dependent.pk)
