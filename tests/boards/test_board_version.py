"""The version is bumped with the workflow lock; a change that changes nothing takes it back."""

from boards import admission
from boards.changes import reconcile_board
from workflows.models import Workflow


def version(workflow) -> int:
    return Workflow.objects.values_list("version", flat=True).get(pk=workflow.pk)


def test_every_change_adds_exactly_one_version(board, make_task, owner):
    backlog, doing, done = board
    start = version(backlog.workflow)
    task = make_task(doing, "a")
    make_task(backlog, "b")
    admission.task_move(task=task, to_step=done, actor=owner)  # the move and its pull: one change
    assert version(backlog.workflow) == start + 3


def test_a_change_that_changes_nothing_keeps_the_version(board, make_task, owner):
    backlog, doing, _ = board
    make_task(doing, "a")
    before = version(backlog.workflow)
    assert reconcile_board(workflow_id=backlog.workflow_id) is False  # room, but nothing to pull
    archived = admission.task_archive(task=make_task(backlog, "b"), actor=owner)
    after_archive = version(backlog.workflow)
    admission.task_archive(task=archived, actor=owner)  # already archived: nothing to do
    assert after_archive == before + 2
    assert version(backlog.workflow) == after_archive
