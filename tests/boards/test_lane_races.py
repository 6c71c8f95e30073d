"""Races on lane and cell limits: real threads, each on its own database connection, on
PostgreSQL and on SQLite alike (the lanes are read under the board's lock: no lock of
their own, so no new order to deadlock in)."""

import pytest

from boards import admission
from boards.models import Task
from common.errors import WipLimitReached
from tests import factories
from tests.concurrency import race, rounds
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Lane, LaneCell, Role, StepGroup

ROUNDS = 10

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.sqlite]


def refusals(results, *scopes):
    """The refusals of a race, each of one of `scopes`; any other error fails the test."""
    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, WipLimitReached)]
    assert not errors, errors
    refused = [r for r in results if isinstance(r, WipLimitReached)]
    assert {r.scope for r in refused} <= set(scopes)
    return len(refused)


def team():
    workspace = WorkspaceFactory()
    owner = UserFactory()
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER)
    return workspace, owner


def two_lanes(workspace, *, active):
    """Backlog -> `active` steps -> Done, with lanes Platform (the first) and Product."""
    steps = factories.board(workspace=workspace, name="Board", active=active, pulls="none")
    workflow = steps[0].workflow
    platform = workflow.lanes.get()
    platform.name = "Platform"
    platform.save()
    product = Lane.objects.create(workflow=workflow, name="Product", position=1)
    return workflow, steps, platform, product


def in_cell(step, lane):
    return Task.objects.occupying().filter(step=step, lane=lane).count()


@rounds(ROUNDS)
def test_eight_concurrent_creates_into_a_cell_with_room_for_two_admit_exactly_two():
    workspace, owner = team()
    workflow, (_, doing, _), platform, product = two_lanes(workspace, active={"In Progress": 0})
    LaneCell.objects.create(lane=platform, step=doing, wip_limit=2)
    admission.task_create(workflow=workflow, step=doing, actor=owner, title="other lane", lane_id=product.pk)

    def create(i):
        return admission.task_create(workflow=workflow, step=doing, actor=owner, title=f"t{i}", lane_id=platform.pk)

    results = race(8, create)

    assert refusals(results, "cell") == 6
    assert (in_cell(doing, platform), in_cell(doing, product)) == (2, 1)
    assert Task.objects.filter(workflow=workflow).count() == 3  # the refused left nothing


@rounds(ROUNDS)
def test_opposite_moves_across_two_lanes_and_two_steps_never_deadlock_or_overfill():
    """Two tasks of Platform in Build move to Product in Review while two of Product in
    Review move to Platform in Build: each cell holds at most 3, and each holds 2 at first."""
    workspace, owner = team()
    workflow, (_, build, review, _), platform, product = two_lanes(workspace, active={"Build": 0, "Review": 0})
    for step in (build, review):
        for lane in (platform, product):
            LaneCell.objects.create(lane=lane, step=step, wip_limit=3)

    def make(step, lane, title):
        return admission.task_create(workflow=workflow, step=step, actor=owner, title=title, lane_id=lane.pk).task

    moves = [(make(build, platform, f"a{i}"), review, product) for i in range(2)]
    moves += [(make(review, product, f"b{i}"), build, platform) for i in range(2)]

    def move(i):
        task, step, lane = moves[i]
        return admission.task_move(task=task, to_step=step, actor=owner, lane_id=lane.pk)

    results = race(4, move)

    refused = refusals(results, "cell")
    assert refused <= 2  # the first move each way finds room: only the other way's fills it
    cells = [in_cell(s, lane) for s in (build, review) for lane in (platform, product)]
    assert max(cells) <= 3 and sum(cells) == 4
    moved = [task for (task, _, lane), result in zip(moves, results, strict=True) if not isinstance(result, Exception)]
    assert all(Task.objects.get(pk=task.pk).lane_id != task.lane_id for task in moved)


@rounds(ROUNDS)
def test_a_lane_limit_and_a_group_limit_racing_admit_within_both():
    """Lane Platform holds at most 2 in active steps; group Development (In Progress + Review)
    at most 3. Eight creates, half in each lane, half into each step: both hold."""
    workspace, owner = team()
    workflow, (_, doing, review, _), platform, product = two_lanes(workspace, active={"In Progress": 0, "Review": 0})
    grouped = StepGroup.objects.create(workflow=workflow, name="Development", wip_limit=3)
    for step in (doing, review):
        step.group = grouped
        step.save(update_fields=["group"])
    platform.wip_limit = 2
    platform.save()

    def create(i):
        lane = platform if i % 2 else product
        step = doing if i // 2 % 2 else review
        return admission.task_create(workflow=workflow, step=step, actor=owner, title=f"t{i}", lane_id=lane.pk)

    results = race(8, create)

    assert refusals(results, "lane", "group") == 5
    in_lane = Task.objects.occupying().filter(lane=platform, step__in=[doing, review]).count()
    assert in_lane <= 2
    assert Task.objects.occupying().filter(step__in=[doing, review]).count() == 3
