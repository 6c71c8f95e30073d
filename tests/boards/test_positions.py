"""Positions are sort keys: a move to index k writes one task row whatever the size
of the column, the others keep their order, and a rebalance, when the keys leave no room,
keeps it too and tells viewers every new key."""

import pytest
from django.db import connection
from django.db.models.expressions import RawSQL
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boards import admission
from boards.models import Priority, Task
from boards.placement import GAP
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows.models import Role


def two_columns():
    """A board of two unlimited steps (nothing pulls), and its owner."""
    owner = UserFactory()
    workflow = WorkflowFactory()
    MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
    todo = StepFactory(workflow=workflow, name="Todo", position=0, is_start_step=True)
    return (todo, StepFactory(workflow=workflow, name="Done", position=1)), owner


@pytest.fixture
def columns(db):
    return two_columns()


def order(step) -> list:
    return list(Task.objects.filter(step=step, archived_at__isnull=True).in_board_order().values_list("id", flat=True))


def row_versions(workflow) -> dict:
    """A version of each task row of the board that changes whenever the row is written."""
    tasks = Task.objects.filter(workflow=workflow)
    if connection.vendor == "postgresql":  # xmin changes on every write, even of the same values
        return dict(tasks.annotate(version=RawSQL("xmin::text", [])).values_list("id", "version"))
    return {pk: (step, key, at) for pk, step, key, at in tasks.values_list("id", "step_id", "position", "updated_at")}


def written(before: dict, after: dict) -> int:
    return sum(1 for pk, version in after.items() if before.get(pk) != version)


def fill(step, owner, count: int, **fields) -> list[Task]:
    return [
        admission.task_create(workflow=step.workflow, step=step, actor=owner, title=f"{step.name} {i}", **fields).task
        for i in range(count)
    ]


def moved(task, step, owner, index) -> int:
    """Move `task` to `index` of `step`'s order; the number of queries it took."""
    with CaptureQueriesContext(connection) as captured:
        admission.task_move(task=task, to_step=step, actor=owner, position=index)
    return len(captured)


class TestOneRowWhateverTheColumn:
    def test_a_reorder_in_a_300_task_column_costs_what_it_costs_in_a_3_task_one(self, columns):
        (backlog, done), owner = columns
        small, large = fill(done, owner, 3), fill(backlog, owner, 300)
        small_queries = moved(small[0], done, owner, 1)

        expected = order(backlog)
        expected.insert(150, expected.pop(expected.index(large[10].pk)))
        before = row_versions(backlog.workflow)
        large_queries = moved(large[10], backlog, owner, 150)

        assert order(backlog) == expected
        assert written(before, row_versions(backlog.workflow)) == 1
        assert large_queries == small_queries

    def test_a_move_to_an_index_of_a_300_task_column_writes_the_task_alone(self, columns):
        (backlog, done), owner = columns
        fill(done, owner, 300)
        arriving = fill(backlog, owner, 2)
        small_queries = moved(arriving[0], done, owner, 0)  # before the first: a key below it

        expected = order(done)
        expected.insert(299, arriving[1].pk)
        before = row_versions(done.workflow)
        large_queries = moved(arriving[1], done, owner, 299)

        assert order(done) == expected
        assert written(before, row_versions(done.workflow)) == 1
        assert large_queries == small_queries

    def test_to_the_end_and_past_it_write_the_task_alone(self, columns):
        (_, done), owner = columns
        tasks = fill(done, owner, 4)
        for index, task in ((None, tasks[0]), (4, tasks[1]), (2_000_000_000, tasks[2])):
            before = row_versions(done.workflow)
            admission.task_move(task=task, to_step=done, actor=owner, position=index)
            assert order(done)[-1] == task.pk
            assert written(before, row_versions(done.workflow)) == 1


class TestRebalance:
    def test_a_spot_moved_to_until_no_key_is_left_rebalances_once_and_keeps_the_order(self, columns, broadcasts):
        # Given a column whose first two tasks are GAP apart
        (_, done), owner = columns
        tasks = fill(done, owner, 20)
        expected = order(done)
        # When task after task goes between the first two: each halves the room left there
        halvings = GAP.bit_length() - 1
        for task in tasks[2 : 2 + halvings]:
            before = row_versions(done.workflow)
            messages = broadcasts(done.workflow, lambda task=task: moved(task, done, owner, 1))
            expected.insert(1, expected.pop(expected.index(task.pk)))
            assert order(done) == expected
            assert written(before, row_versions(done.workflow)) == 1
            assert "orders" not in messages[0]
        # Then the next move there finds no key between its neighbours: the step is rebalanced
        last = tasks[2 + halvings]
        before = row_versions(done.workflow)
        (message,) = broadcasts(done.workflow, lambda: moved(last, done, owner, 1))
        expected.insert(1, expected.pop(expected.index(last.pk)))
        assert order(done) == expected
        assert written(before, row_versions(done.workflow)) > 1
        keys = list(Task.objects.filter(step=done).in_board_order().values_list("id", "position"))
        assert message["orders"] == {str(done.pk): [{"id": str(pk), "position": key} for pk, key in keys]}
        assert [key for _, key in keys] == [GAP * rank for rank in range(1, len(keys) + 1)]
        # And the room is back: the next move there writes one row again
        before = row_versions(done.workflow)
        moved(tasks[-1], done, owner, 1)
        assert written(before, row_versions(done.workflow)) == 1

    def test_tied_keys_are_ordered_by_priority_and_a_move_between_them_rebalances(self, columns):
        (_, done), owner = columns
        low, critical = (
            admission.task_create(workflow=done.workflow, step=done, actor=owner, title=t, position=7, priority=p).task
            for t, p in (("low", Priority.LOW), ("critical", Priority.CRITICAL))
        )
        (arriving,) = fill(done, owner, 1)
        assert order(done) == [critical.pk, low.pk, arriving.pk]
        moved(arriving, done, owner, 1)
        assert order(done) == [critical.pk, arriving.pk, low.pk]


@pytest.mark.django_db
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(
    tasks=st.lists(st.tuples(st.sampled_from([None, 0, 1, 2, 3]), st.sampled_from(Priority)), min_size=1, max_size=8),
    moves=st.lists(st.tuples(st.integers(0, 7), st.none() | st.integers(0, 8)), max_size=30),
)
def test_random_reorders_keep_the_order_a_list_would_have(tasks, moves):
    """Created with given (tied, adjacent) or default keys and any priority, then reordered
    at random: the column is always the list `list.insert` gives, whatever the keys became."""
    (_, done), owner = two_columns()
    for i, (key, priority) in enumerate(tasks):
        admission.task_create(
            workflow=done.workflow, step=done, actor=owner, title=f"t{i}", position=key, priority=priority
        )
    expected = order(done)
    for pick, index in moves:
        task_id = expected[pick % len(expected)]
        admission.task_move(task=Task.objects.get(pk=task_id), to_step=done, actor=owner, position=index)
        expected.remove(task_id)
        expected.insert(len(expected) if index is None else index, task_id)
        assert order(done) == expected
