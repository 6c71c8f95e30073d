"""kandev_task_cycle_seconds: observed once per task, at its first entry into done."""

from prometheus_client import REGISTRY

from boards.admission import task_move
from flow.cycle import observe_first_finishes
from tests.factories import StepFactory


def samples(workflow):
    labels = {"workflow": str(workflow.pk)}
    count = REGISTRY.get_sample_value("kandev_task_cycle_seconds_count", labels) or 0
    return count, REGISTRY.get_sample_value("kandev_task_cycle_seconds_sum", labels) or 0


def test_a_task_is_observed_when_it_first_finishes_and_not_again(workflow, board, make_task, owner):
    backlog, doing, done = board
    task = make_task(backlog)
    waiting = make_task(doing)  # active, not finished
    task_move(task=task, to_step=doing, actor=owner)
    before = samples(workflow)
    assert observe_first_finishes(workflow, [task.pk, waiting.pk]) == 0
    task_move(task=task, to_step=done, actor=owner)
    assert observe_first_finishes(workflow, [task.pk, waiting.pk]) == 1
    count, total = samples(workflow)
    assert count == before[0] + 1
    assert total > before[1]
    task_move(task=task, to_step=doing, actor=owner, force=True, reason="reopened")
    task_move(task=task, to_step=done, actor=owner)
    assert observe_first_finishes(workflow, [task.pk]) == 0  # a re-entry is not a new finish
    assert samples(workflow)[0] == count


def test_a_task_that_skipped_active_steps_has_no_cycle(workflow, board, make_task, owner):
    backlog, doing, done = board
    make_task(doing), make_task(doing)  # In Progress is full: it does not pull the task
    task = make_task(backlog)
    task_move(task=task, to_step=done, actor=owner)
    assert [e.kind for e in task.events.order_by("at", "id")] == ["created", "moved"]
    assert observe_first_finishes(workflow, [task.pk]) == 0


def test_moving_into_done_observes_after_the_commit(
    workflow, board, make_task, owner, django_capture_on_commit_callbacks
):
    backlog, doing, done = board
    task = make_task(doing)
    before = samples(workflow)[0]
    with django_capture_on_commit_callbacks(execute=True):
        task_move(task=task, to_step=done, actor=owner)
    assert samples(workflow)[0] == before + 1


def test_kinds_come_from_the_step_field_not_the_position(workflow, board, make_task, owner):
    backlog, doing, done = board
    parked = StepFactory(workflow=workflow, name="Parked", position=3)  # last, and active
    task = make_task(backlog)  # pulled into In Progress at once: its cycle starts
    task_move(task=task, to_step=parked, actor=owner)
    assert observe_first_finishes(workflow, [task.pk]) == 0  # the last step is not where work ends
    task_move(task=task, to_step=done, actor=owner)
    assert observe_first_finishes(workflow, [task.pk]) == 1
