"""The pull: order, cascade, triggers."""

from boards import admission, structure
from boards.changes import reconcile_all
from boards.models import EventKind, Task, TaskEvent
from tests.factories import StepFactory


def titles(step):
    return list(Task.objects.occupying().filter(step=step).in_board_order().values_list("title", flat=True))


def test_leaving_a_limited_step_pulls_from_the_feeder_in_pull_order(board, make_task, owner):
    backlog, doing, done = board
    a, _ = make_task(doing, "a"), make_task(doing, "b")
    make_task(backlog, "low", position=0, priority=3)
    make_task(backlog, "critical", position=0, priority=0)
    make_task(backlog, "later", position=1, priority=0)
    admission.task_move(task=a, to_step=done, actor=owner)
    assert titles(doing) == ["b", "critical"]
    assert titles(backlog) == ["low", "later"]
    event = TaskEvent.objects.get(kind=EventKind.PULLED)
    assert (event.from_step, event.to_step) == (backlog, doing)


def test_equal_position_and_priority_pull_the_oldest_first(board, make_task, owner):
    backlog, doing, done = board
    a = make_task(doing, "a")
    make_task(doing, "b")
    for title in ("one", "two", "three"):
        make_task(backlog, title, position=0)
    admission.task_archive(task=a, actor=owner)
    assert titles(doing) == ["b", "one"]


def test_archive_and_delete_pull_too(board, make_task, owner):
    backlog, doing, _ = board
    a, b = make_task(doing, "a"), make_task(doing, "b")
    make_task(backlog, "next1")
    make_task(backlog, "next2")
    admission.task_archive(task=a, actor=owner)
    admission.task_delete(task=b, actor=owner)
    assert titles(doing) == ["next1", "next2"]


def test_pulls_cascade_along_the_feeder_chain(workflow, make_task, owner):
    inbox = StepFactory(workflow=workflow, name="Inbox", position=0, is_start_step=True)
    ready = StepFactory(workflow=workflow, name="Ready", position=1, wip_limit=1, pull_from_step=inbox)
    doing = StepFactory(workflow=workflow, name="Doing", position=2, wip_limit=1, pull_from_step=ready)
    done = StepFactory(workflow=workflow, name="Done", position=3)
    working = make_task(doing, "working")
    make_task(ready, "ready")
    make_task(inbox, "inbox")
    admission.task_move(task=working, to_step=done, actor=owner)
    assert titles(doing) == ["ready"]
    assert titles(ready) == ["inbox"]
    assert titles(inbox) == []


def test_raising_the_limit_pulls(board, make_task, owner):
    backlog, doing, _ = board
    make_task(doing, "a")
    make_task(doing, "b")
    make_task(backlog, "c")
    make_task(backlog, "d")
    structure.step_update(step=doing, actor=owner, wip_limit=3)
    assert titles(doing) == ["a", "b", "c"]


def test_setting_a_feeder_pulls(board, make_task, owner):
    backlog, doing, done = board
    done.wip_limit = 1
    done.save()
    make_task(doing, "a")
    structure.step_update(step=done, actor=owner, pull_from_step_id=doing.pk)
    assert titles(done) == ["a"]


def test_ephemeral_and_archived_tasks_are_never_pulled(board, make_task, owner):
    backlog, doing, done = board
    a, _ = make_task(doing, "a"), make_task(doing, "b")
    make_task(backlog, "scratch", is_ephemeral=True)
    old = make_task(backlog, "old")
    admission.task_archive(task=old, actor=owner)
    admission.task_move(task=a, to_step=done, actor=owner)
    assert titles(doing) == ["b"]


def test_the_reconciler_fills_stranded_capacity(board, make_task, owner):
    backlog, doing, _ = board
    make_task(doing, "a")
    make_task(doing, "b")
    make_task(backlog, "waiting")
    # Capacity opened behind the service's back (as after a crash between commit and pull).
    Task.objects.filter(title="a").delete()
    assert titles(doing) == ["b"]
    assert reconcile_all() == 1
    assert titles(doing) == ["b", "waiting"]
    assert reconcile_all() == 0
