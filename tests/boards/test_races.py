"""Admission races with real threads, each on its own database connection.

They run on PostgreSQL (row locks) and on SQLite (IMMEDIATE transactions) alike.
"""

import pytest

from boards import admission
from boards.models import Task, TaskEvent
from common.errors import WipLimitReached
from tests.concurrency import race, rounds
from tests.factories import MembershipFactory, UserFactory, board
from workflows.models import Role, Workflow

ROUNDS = 10


def outcomes(results):
    refused = [r for r in results if isinstance(r, WipLimitReached)]
    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, WipLimitReached)]
    assert not errors, errors
    return len(results) - len(refused), len(refused)


def new_board(*, limit=2, feeder=True):
    user = UserFactory()
    backlog, doing, done = board(active={"In Progress": limit}, pulls="first" if feeder else "none", done_limit=limit)
    MembershipFactory(workspace=backlog.workflow.workspace, user=user, role=Role.OWNER)
    return user, backlog, doing, done


def create(step, user, title):
    return admission.task_create(workflow=step.workflow, step=step, actor=user, title=title)


def occupied(step):
    return Task.objects.occupying().filter(step=step).count()


pytestmark = pytest.mark.django_db(transaction=True)


@rounds(ROUNDS)
def test_eight_concurrent_creates_into_a_limit_2_step_admit_exactly_two():
    user, _, doing, _ = new_board()
    results = race(8, lambda i: create(doing, user, f"t{i}"))
    assert outcomes(results) == (2, 6)
    assert occupied(doing) == 2
    # Refused creations left nothing: two tasks, two events, two versions.
    assert Task.objects.filter(workflow=doing.workflow).count() == 2
    assert TaskEvent.objects.filter(workflow=doing.workflow).count() == 2
    assert Workflow.objects.get(pk=doing.workflow_id).version == 2


@rounds(ROUNDS)
def test_concurrent_moves_into_the_last_slot_admit_exactly_one():
    user, backlog, doing, _ = new_board(feeder=False)
    admission.task_create(workflow=doing.workflow, step=doing, actor=user, title="already")
    tasks = [create(backlog, user, f"t{i}").task for i in range(6)]
    results = race(6, lambda i: admission.task_move(task=tasks[i], to_step=doing, actor=user))
    assert outcomes(results) == (1, 5)
    assert occupied(doing) == 2
    assert Task.objects.filter(step=backlog).count() == 5


@rounds(ROUNDS)
def test_opposite_moves_between_two_limited_steps_never_deadlock_or_overfill():
    user, _, doing, done = new_board(limit=3, feeder=False)
    left = [create(doing, user, f"l{i}").task for i in range(3)]
    right = [create(done, user, f"r{i}").task for i in range(2)]

    def move(i):
        if i % 2 == 0:
            return admission.task_move(task=left[i // 2], to_step=done, actor=user)
        return admission.task_move(task=right[i // 2], to_step=doing, actor=user)

    results = race(5, move)
    admitted, _ = outcomes(results)
    # The first move into Done always fits, so at least one is admitted.
    assert admitted >= 1
    for i, result in enumerate(results):
        task, target = (left[i // 2], done) if i % 2 == 0 else (right[i // 2], doing)  # as move(i)
        where = Task.objects.get(pk=task.pk).step_id
        if isinstance(result, WipLimitReached):  # refused with its 409 body, and left in place
            assert result.status_code == 409 and result.as_body()["step"]["id"] == str(target.pk)
            assert where == task.step_id
        else:
            assert where == target.pk
    assert occupied(doing) <= 3 and occupied(done) <= 3
    assert occupied(doing) + occupied(done) == 5
    # Nothing of a refused move is left: five creates, one event and one version per admitted move.
    workflow = doing.workflow
    assert TaskEvent.objects.filter(workflow=workflow).count() == 5 + admitted
    assert Workflow.objects.get(pk=workflow.pk).version == 5 + admitted


@rounds(ROUNDS)
def test_a_pull_racing_creates_never_overfills():
    user, backlog, doing, done = new_board(limit=2)
    first = admission.task_create(workflow=doing.workflow, step=doing, actor=user, title="a").task
    admission.task_create(workflow=doing.workflow, step=doing, actor=user, title="b")
    for i in range(3):
        admission.task_create(workflow=doing.workflow, step=backlog, actor=user, title=f"waiting{i}")

    def act(i):
        if i == 0:  # frees a slot: the pull competes with the creates below for it
            return admission.task_move(task=first, to_step=done, actor=user)
        return admission.task_create(workflow=doing.workflow, step=doing, actor=user, title=f"new{i}")

    results = race(6, act)
    outcomes(results)
    assert occupied(doing) == 2


@rounds(3)
def test_an_unlimited_step_takes_every_concurrent_create():
    user, backlog, _, _ = new_board(feeder=False)
    results = race(8, lambda i: create(backlog, user, f"t{i}"))
    assert outcomes(results) == (8, 0)
    assert Task.objects.filter(step=backlog).count() == 8
