"""Races on the limits beyond the step: real
threads, each on its own database connection, on PostgreSQL and on SQLite alike."""

import pytest

from boards import admission, services
from boards.models import ClassOfService, Task, TaskEvent
from common.errors import WipLimitReached
from tests import factories
from tests.concurrency import race, rounds
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Role, StepGroup, Workflow

ROUNDS = 10

pytestmark = pytest.mark.django_db(transaction=True)


def refusals(results, scope):
    """The refusals of a race, all of `scope`; any other error fails the test."""
    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, WipLimitReached)]
    assert not errors, errors
    refused = [r for r in results if isinstance(r, WipLimitReached)]
    assert {r.scope for r in refused} <= {scope}
    return len(refused)


def occupied(*steps):
    return Task.objects.occupying().filter(step__in=steps).count()


def board(workspace, owner, *, name="Board"):
    """Backlog -> Development group (In Progress + Review, each unlimited) -> Done."""
    steps = factories.board(workspace=workspace, name=name, active={"In Progress": 0, "Review": 0}, pulls="none")
    return steps[0].workflow, *steps


def team(limit=0):
    workspace = WorkspaceFactory()
    owner = UserFactory()
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER, wip_limit=limit)
    return workspace, owner


def group(name, limit, *steps):
    grouped = StepGroup.objects.create(workflow=steps[0].workflow, name=name, wip_limit=limit)
    for step in steps:
        step.group = grouped
        step.save(update_fields=["group"])
    return grouped


@rounds(ROUNDS)
def test_eight_concurrent_creates_into_a_group_with_room_for_two_admit_exactly_two():
    workspace, owner = team()
    workflow, _, doing, review, _ = board(workspace, owner)
    group("Development", 3, doing, review)
    admission.task_create(workflow=workflow, step=review, actor=owner, title="already")

    def create(i):  # half into each step of the group: only the group's limit binds
        return admission.task_create(workflow=workflow, step=(doing, review)[i % 2], actor=owner, title=f"t{i}")

    results = race(8, create)
    assert refusals(results, "group") == 6
    assert occupied(doing, review) == 3
    # Refused creates left nothing: three tasks, three events, three versions.
    assert Task.objects.filter(workflow=workflow).count() == 3
    assert TaskEvent.objects.filter(workflow=workflow).count() == 3
    assert Workflow.objects.get(pk=workflow.pk).version == 3


@rounds(ROUNDS)
def test_eight_concurrent_assignments_on_two_boards_to_a_person_with_limit_three_admit_exactly_three():
    workspace, owner = team()
    alice = UserFactory()
    MembershipFactory(workspace=workspace, user=alice, role=Role.MEMBER, wip_limit=3)
    boards = [board(workspace, owner, name=f"Board {n}") for n in range(2)]
    tasks = [
        admission.task_create(workflow=workflow, step=doing, actor=owner, title=f"t{i}").task
        for i in range(4)
        for workflow, _, doing, _, _ in boards
    ]

    results = race(8, lambda i: services.task_update(task=tasks[i], actor=owner, assignee_id=alice.pk))
    assert refusals(results, "person") == 5
    assigned = Task.objects.occupying().filter(assignee=alice)
    assert assigned.count() == 3
    # The refused assignments left nothing: each board has four creates and its own assignments.
    for workflow, *_ in boards:
        mine = assigned.filter(workflow=workflow).count()
        assert TaskEvent.objects.filter(workflow=workflow).count() == 4 + mine
        assert Workflow.objects.get(pk=workflow.pk).version == 4 + mine


@rounds(ROUNDS)
def test_opposite_moves_between_grouped_and_ungrouped_steps_never_deadlock_or_overfill():
    workspace, owner = team()
    workflow, backlog, doing, review, done = board(workspace, owner)
    group("Development", 3, doing, review)
    done.wip_limit = 3
    done.save(update_fields=["wip_limit"])
    inside = [
        admission.task_create(workflow=workflow, step=s, actor=owner, title=f"g{i}").task
        for i, s in enumerate((doing, review, doing))
    ]
    outside = [admission.task_create(workflow=workflow, step=done, actor=owner, title=f"d{i}").task for i in range(2)]

    def move(i):
        if i % 2 == 0:  # out of the group, into Done
            return admission.task_move(task=inside[i // 2], to_step=done, actor=owner)
        return admission.task_move(task=outside[i // 2], to_step=(doing, review)[i // 2], actor=owner)

    results = race(5, move)
    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, WipLimitReached)]
    assert not errors, errors
    assert occupied(doing, review) <= 3 and occupied(done) <= 3
    assert occupied(doing, review, done) == 5
    admitted = sum(1 for r in results if not isinstance(r, Exception))
    assert admitted >= 1  # the first move into Done always fits
    assert TaskEvent.objects.filter(workflow=workflow).count() == 5 + admitted
    assert Workflow.objects.get(pk=workflow.pk).version == 5 + admitted


@rounds(ROUNDS)
def test_four_concurrent_expedite_markings_with_an_allowance_of_one_mark_exactly_one():
    workspace, owner = team()
    workflow, _, doing, _, _ = board(workspace, owner)
    Workflow.objects.filter(pk=workflow.pk).update(expedite_limit=1)
    tasks = [admission.task_create(workflow=workflow, step=doing, actor=owner, title=f"t{i}").task for i in range(4)]

    results = race(4, lambda i: services.task_update(task=tasks[i], actor=owner, class_of_service="expedite"))
    assert refusals(results, "expedite") == 3
    assert Task.objects.filter(workflow=workflow, class_of_service=ClassOfService.EXPEDITE).count() == 1
    assert TaskEvent.objects.filter(workflow=workflow).count() == 4 + 1


@rounds(ROUNDS)
def test_expedite_tasks_racing_past_a_full_step_use_the_allowance_once():
    workspace, owner = team()
    workflow, backlog, doing, _, _ = board(workspace, owner)
    doing.wip_limit = 1
    doing.save(update_fields=["wip_limit"])
    admission.task_create(workflow=workflow, step=doing, actor=owner, title="standard")
    urgent = [
        admission.task_create(
            workflow=workflow, step=backlog, actor=owner, title=f"u{i}", class_of_service="expedite"
        ).task
        for i in range(4)
    ]

    results = race(4, lambda i: admission.task_move(task=urgent[i], to_step=doing, actor=owner))
    assert refusals(results, "step") == 3
    assert occupied(doing) == 2  # the standard task and one expedited past the limit
    assert TaskEvent.objects.filter(workflow=workflow, kind="expedited").count() == 1
