"""A pull cascade is a bulk pull: its query count does not grow with the slots it fills."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from boards import admission
from boards.changes import reconcile_board
from boards.models import EventKind, Task, TaskEvent
from tests.factories import StepFactory

LIMIT = 15


def test_vacating_k_slots_costs_the_same_queries_for_every_k(workflow, make_task, owner):
    intake = StepFactory(workflow=workflow, name="Intake", position=0, is_start_step=True)
    ready = StepFactory(workflow=workflow, name="Ready", position=1, wip_limit=LIMIT, pull_from_step=intake)
    doing = StepFactory(workflow=workflow, name="Doing", position=2, wip_limit=LIMIT, pull_from_step=ready)
    done = StepFactory(workflow=workflow, name="Done", position=3)
    for i in range(2 * LIMIT + 1 + 5 + LIMIT):
        make_task(intake, f"t{i}")
    reconcile_board(workflow_id=workflow.pk)

    queries = {}
    for k in (1, 5, LIMIT):
        occupying = Task.objects.occupying().filter(step=doing).in_board_order()
        leaving = list(occupying.values_list("id", flat=True)[:k])
        pulled_before = TaskEvent.objects.filter(kind=EventKind.PULLED).count()
        with CaptureQueriesContext(connection) as captured:
            admission.task_bulk_move(task_ids=leaving, to_step=done, actor=owner)
        queries[k] = len(captured)
        # k left Doing; Doing pulled k from Ready, Ready pulled k from Intake.
        assert TaskEvent.objects.filter(kind=EventKind.PULLED).count() - pulled_before == 2 * k
        for step in (ready, doing):
            assert Task.objects.occupying().filter(step=step).count() == LIMIT
    assert queries[1] == queries[5] == queries[LIMIT], queries
