"""Races on dependencies: real threads, each on its own database connection. Links created
at once never close a cycle; a blocker finishing while its dependent's board pulls, or while
a link to it is being made, leaves every `blocked_by` right and every board settled."""

import pytest

from boards import admission
from boards.links import link_create
from boards.models import Task, TaskLink
from common.errors import Invalid
from tests import factories
from tests.boards.settling import blockers_drift, unsettled
from tests.concurrency import race, race_ok, rounds
from tests.factories import MembershipFactory, UserFactory, WorkspaceFactory
from workflows.models import Role

ROUNDS = 10

pytestmark = pytest.mark.django_db(transaction=True)


def team():
    workspace = WorkspaceFactory()
    owner = UserFactory()
    MembershipFactory(workspace=workspace, user=owner, role=Role.OWNER)
    return workspace, owner


def create(step, owner, title) -> Task:
    return admission.task_create(workflow=step.workflow, step=step, actor=owner, title=title).task


def linked(blocker, dependent, owner):
    return link_create(blocker=blocker, dependent=dependent, actor=owner, field="blocks_task_id")


def cycles() -> list:
    """Pairs of tasks each of which waits, through the links, for the other."""
    blockers = {}
    for blocker_id, dependent_id in TaskLink.objects.values_list("blocker_id", "dependent_id"):
        blockers.setdefault(dependent_id, set()).add(blocker_id)

    def waits_for(task, other):
        todo, seen = [task], {task}
        while todo:
            for b in blockers.get(todo.pop(), ()):
                if b == other:
                    return True
                if b not in seen:
                    seen.add(b)
                    todo.append(b)
        return False

    return [(a, b) for a in blockers for b in blockers if a != b and waits_for(a, b) and waits_for(b, a)]


@rounds(ROUNDS)
def test_opposite_links_made_at_once_on_two_boards_never_form_a_cycle():
    workspace, owner = team()
    (here, *_) = factories.board(workspace=workspace, name="Here")
    (there, *_) = factories.board(workspace=workspace, name="There")
    a, b, c = create(here, owner, "a"), create(there, owner, "b"), create(here, owner, "c")
    # a -> b, b -> a, and the ring a -> b -> c -> a: any one of them may win, never all
    attempts = [(a, b), (b, a), (b, c), (c, a)]

    results = race(len(attempts), lambda i: linked(*attempts[i], owner))

    assert_no_cycle(workspace, results, len(attempts))


@rounds(ROUNDS)
def test_two_links_closing_a_ring_through_four_tasks_at_once_never_both_win():
    # Given b -> c and d -> a: a -> b and c -> d each close the ring a -> b -> c -> d -> a,
    # and the two share no task and no board, so only the workspace's link guard orders them
    workspace, owner = team()
    (here, *_) = factories.board(workspace=workspace, name="Here")
    (there, *_) = factories.board(workspace=workspace, name="There")
    a, b, c, d = (
        create(here, owner, "a"),
        create(there, owner, "b"),
        create(there, owner, "c"),
        create(here, owner, "d"),
    )
    linked(b, c, owner)
    linked(d, a, owner)
    attempts = [(a, b), (c, d)]

    results = race(len(attempts), lambda i: linked(*attempts[i], owner))

    assert_no_cycle(workspace, results, len(attempts), already=2)


def assert_no_cycle(workspace, results, attempted, already=0):
    errors = [r for r in results if isinstance(r, Exception) and not isinstance(r, Invalid)]
    assert not errors, errors
    made = [r for r in results if not isinstance(r, Exception)]
    assert made and len(made) < attempted
    assert TaskLink.objects.filter(blocker__workflow__workspace=workspace).count() == already + len(made)
    assert cycles() == []
    assert blockers_drift(workspace.pk) == []
    TaskLink.objects.filter(blocker__workflow__workspace=workspace).delete()  # the next round's cycles() reads all


@rounds(ROUNDS)
def test_a_blocker_finishing_while_its_dependents_board_pulls_leaves_it_settled():
    # Given In Progress (limit 2, full) pulling from Backlog, whose first task waits for a
    # blocker on another board and whose second is free
    workspace, owner = team()
    backlog, doing, done = factories.board(workspace=workspace, name="Product")
    _, platform_doing, platform_done = factories.board(workspace=workspace, name="Platform")
    busy = [create(doing, owner, "busy 1"), create(doing, owner, "busy 2")]
    blocker = create(platform_doing, owner, "platform upgrade")
    dependent = create(backlog, owner, "feature")
    create(backlog, owner, "free")
    linked(blocker, dependent, owner)

    # When the blocker is finished on its board while two slots open on the dependent's
    moves = [(blocker, platform_done), (busy[0], done), (busy[1], done)]
    race_ok(len(moves), lambda i: admission.task_move(task=moves[i][0], to_step=moves[i][1], actor=owner))

    # Then once every change and its follow-up committed, both were pulled and all is settled
    in_progress = set(Task.objects.occupying().filter(step=doing).values_list("title", flat=True))
    assert in_progress == {"feature", "free"}
    assert Task.objects.get(pk=dependent.pk).blocked_by == []
    assert unsettled(backlog.workflow) == [] == unsettled(platform_doing.workflow)
    assert blockers_drift(workspace.pk) == []


@rounds(ROUNDS)
def test_a_blocker_finishing_while_a_link_to_it_is_made_blocks_nothing():
    # Given a task on another board about to be linked as a blocker, and finished at once
    workspace, owner = team()
    backlog, _, _ = factories.board(workspace=workspace, name="Product")
    _, platform_doing, platform_done = factories.board(workspace=workspace, name="Platform")
    blocker = create(platform_doing, owner, "platform upgrade")
    dependent = create(backlog, owner, "feature")

    actions = [
        lambda: linked(blocker, dependent, owner),
        lambda: admission.task_move(task=blocker, to_step=platform_done, actor=owner),
    ]
    race_ok(2, lambda i: actions[i]())

    # Then, whichever committed first, the finished blocker holds nothing back
    assert Task.objects.get(pk=dependent.pk).blocked_by == []
    assert blockers_drift(workspace.pk) == []
    assert unsettled(backlog.workflow) == []


@rounds(ROUNDS)
def test_a_blocker_reopened_while_its_dependent_is_linked_blocks_it():
    workspace, owner = team()
    backlog, _, done = factories.board(workspace=workspace, name="Product")
    blocker = create(done, owner, "shipped")
    dependent = create(backlog, owner, "follow-up")

    actions = [
        lambda: linked(blocker, dependent, owner),
        lambda: admission.task_move(task=blocker, to_step=backlog, actor=owner),
    ]
    race_ok(2, lambda i: actions[i]())

    assert Task.objects.get(pk=dependent.pk).blocked_by == [str(blocker.pk)]
    assert blockers_drift(workspace.pk) == []
