"""A board change from its locks to its commit, ending settled.

`board_change()` is how every service changes a board: it locks the board (change.py),
lets the service write, fills every step the writes may have given room or candidates
(pull.py), then writes the history and sends one live message, in one version step.
"""

import logging
from contextlib import ExitStack, contextmanager
from functools import partial

from django.db import transaction
from django.db.models import Q

from boards import dependencies
from boards.change import close_change, open_change
from boards.locking import board_transaction
from boards.models import Task
from boards.pull import settle
from common.errors import Invalid
from workflows.models import Workflow, Workspace

logger = logging.getLogger(__name__)


@contextmanager
def board_change(workflow_id, *, actor=None, task_id=None):
    """Lock a board for one change; on clean exit settle it, record it and broadcast it."""
    change = open_change(workflow_id, actor=actor, task_id=task_id)
    yield change
    settle(change)
    close_change(change)
    freed = change.worklist.freed
    if freed:
        fill = partial(fill_for_persons, change.workflow.workspace_id, set(freed), exclude=change.workflow.pk)
        transaction.on_commit(fill, robust=True)
    if change.worklist.elsewhere:
        transaction.on_commit(partial(refresh_boards, dict(change.worklist.elsewhere)), robust=True)


def workspace_boards(boards: ExitStack, workspace_id, actor, *, besides=None) -> list:
    """A change of each board of a workspace (but `besides`, a board the caller has locked
    already: an import's new one), for a change of something all its boards show (a label,
    a blocker type), locked in id order, then the workspace's row: one lock order for every
    such change, so two never wait on each other in a circle, and the row held last lets one
    of them count and name the workspace's labels or types alone, also where a board made in
    the same transaction (an import's) is not yet seen by others."""
    workflows = Workflow.objects.filter(workspace_id=workspace_id).order_by("pk")
    if besides is not None:
        workflows = workflows.exclude(pk=besides)
    changes = [boards.enter_context(board_change(pk, actor=actor)) for pk in workflows.values_list("pk", flat=True)]
    Workspace.objects.select_for_update(no_key=True).filter(pk=workspace_id).first()
    return changes


def announce_everywhere(changes: list, type_: str, **payload) -> None:
    """One live message on each of `workspace_boards`, each board's version advanced."""
    for change in changes:
        change.record.touch()
        change.record.announce(type_, **payload)


def delete_everywhere(row, actor, *, held_by: dict, without, message: str, **payload) -> None:
    """Delete a workspace's `row` (a label, a blocker type) that tasks may hold, on every
    board at once: each task holding it (Task filter `held_by`) takes the fields `without(task)`
    gives ({field: value}), then one live message `message` with `payload` on every board, and
    the row goes."""
    with ExitStack() as boards:
        changes = workspace_boards(boards, row.workspace_id, actor)
        for change in changes:
            tasks = Task.objects.select_for_update().filter(workflow=change.workflow, **held_by).order_by("pk")
            for task in tasks:
                fields = without(task)
                for field, value in fields.items():
                    setattr(task, field, value)
                task.updated_at = change.now
                task.save(update_fields=[*fields, "updated_at"])
                change.record.changed(task, change.steps[task.step_id])
        announce_everywhere(changes, message, **payload)
        type(row).objects.filter(pk=row.pk).delete()


def made_by_name(change, model, wanted: dict, *, most: int, field: str, message: str, data) -> dict:
    """{lowercase name: row} of the workspace's `model` rows (labels, blocker types) for the
    names `wanted` ({lowercase name: the fields of a new row}), making those it lacks, for
    an import into `change`'s board. The workspace's other boards are locked before the rows
    are read, as every change of them locks them; past `most` rows, a 400 on `field`. A row
    made here reaches every board as a change of it: the live message `message` with
    `data(row)`."""
    if not wanted:
        return {}
    workspace_id = change.workflow.workspace_id
    with ExitStack() as boards:
        others = workspace_boards(boards, workspace_id, change.actor, besides=change.workflow.pk)
        existing = {row.name.lower(): row for row in model.objects.filter(workspace_id=workspace_id)}
        missing = [fields for key, fields in wanted.items() if key not in existing]
        if not missing:
            return existing
        if len(existing) + len(missing) > most:
            noun = model._meta.verbose_name_plural
            raise Invalid({field: [f"A workspace has at most {most} {noun}."]})
        made = model.objects.bulk_create(model(workspace_id=workspace_id, **fields) for fields in missing)
        payload = data(made[0])
        change.record.announce(message, **payload)
        announce_everywhere(others, message, **payload)
    return {**existing, **{row.name.lower(): row for row in made}}


@contextmanager
def task_change(task, *, actor=None):
    """A change about one task: the board locked as `board_change` does, and the task's row
    locked with it (one round trip): yields the change and the locked task."""
    with board_change(task.workflow_id, actor=actor, task_id=task.pk) as change:
        yield change, change.board.lock_task(task.pk)


def fill_for_persons(workspace_id, user_ids, *, exclude=None) -> None:
    """After commit: people who have room again (work left them, their limit rose) may take
    work waiting for them on the workspace's boards, each board in its own
    transaction; `exclude` is a board already settled. The reconciler is the backup."""
    waiting = Task.objects.live().filter(assignee_id__in=user_ids, workflow__workspace_id=workspace_id)
    if exclude is not None:
        waiting = waiting.exclude(workflow_id=exclude)
    for workflow_id in waiting.values_list("workflow_id", flat=True).distinct():
        reconcile_board(workflow_id=workflow_id)


@board_transaction
def reconcile_board(*, workflow_id) -> bool:
    """Fill every step of one board that has room, its tasks' blockers read again; True when
    anything changed. The backstop for a crash between a commit and its follow-up work:
    every change already settles."""
    with board_change(workflow_id) as change:
        dependencies.mark_board(change)
        change.worklist.opened(*change.steps.values())
    return change.record.dirty


def refresh_boards(dependents: dict) -> None:
    """After commit: a change finished or reopened blockers of tasks on other boards of its
    workspace ({workflow id: task ids}); each board gives them their blockers and settles,
    in its own transaction. The reconciler is the backup."""
    for workflow_id, task_ids in dependents.items():
        refresh_board(workflow_id=workflow_id, task_ids=task_ids)


@board_transaction
def refresh_board(*, workflow_id, task_ids) -> None:
    with board_change(workflow_id) as change:
        dependencies.mark_board(change, task_ids)


def reconcile_all() -> int:
    """One reconciler pass over every board with a limit or a queue; returns boards changed."""
    changed = 0
    limited = Q(steps__wip_limit__gt=0) | Q(steps__group__isnull=False)  # a grouped step fills itself too
    workflow_ids = Workflow.objects.filter(limited).values_list("id", flat=True).distinct()
    for workflow_id in workflow_ids:
        try:
            changed += reconcile_board(workflow_id=workflow_id)
        except Exception:  # one broken board must not stop the others
            logger.exception("reconciling board %s failed", workflow_id)
    return changed
