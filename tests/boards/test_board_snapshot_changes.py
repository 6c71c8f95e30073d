"""A cached board snapshot follows the board's changes: the live messages of the versions
since its own, kept in the shared cache (Redis across processes, or this process's memory),
applied to it give exactly the board a fresh build reads (its JSON). What
the messages do not fully describe (a renumbered column, a deleted step, a renamed board)
is built again, never applied wrong."""

import os
import random

import orjson
import pytest
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from boards import admission, services, structure
from boards.models import ClassOfService, EventKind, Task, TaskEvent
from boards.snapshots import board_json, board_snapshot, build_snapshot, updated_snapshot
from common.errors import KandevError
from tests.factories import StepFactory
from workflows.models import OnFull, StepGroup, Workflow, WorkflowStep

CACHES = {
    # Its own memory, roomy enough that no kept change is culled during a test (a culled one
    # would be a gap: built, rightly, but not what these tests expect).
    "locmem": {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "board-changes",
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        }
    },
    "redis": {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ.get("REDIS_URL", ""),
            "KEY_PREFIX": "kandev-test-changes",
        }
    },
}
APPLIED, BUILT = "applied", "built"
CHANGES = 200
SEED = 17  # its 200 changes reach pulls, promotions, queues, blocks, restores


# The Redis case runs where Redis is configured (the PostgreSQL pass); the embedded SQLite
# pass has no Redis and runs locmem only.
@pytest.fixture(params=[name for name in sorted(CACHES) if name != "redis" or os.environ.get("REDIS_URL")])
def shared_cache(request):
    with override_settings(CACHES=CACHES[request.param]):
        yield request.param


class RandomChanges:
    """Random changes through the services; each returns how a reader at the version before
    should get the board after it (APPLIED or BUILT), or None when there was nothing to do."""

    def __init__(self, rng: random.Random, workflow, actor):
        self.rng, self.workflow, self.actor = rng, workflow, actor
        self.titles = 0

    def steps(self):
        return list(WorkflowStep.objects.filter(workflow=self.workflow).order_by("position"))

    def tasks(self, **filters):
        return list(Task.objects.filter(workflow=self.workflow, **filters).order_by("created_at"))

    def pick(self, **filters):
        found = self.tasks(**filters)
        return self.rng.choice(found) if found else None

    def create(self):
        self.titles += 1
        admission.task_create(
            workflow=self.workflow,
            step=self.rng.choice(self.steps()),
            actor=self.actor,
            title=f"task {self.titles}",
            priority=self.rng.randrange(5),
            position=self.rng.choice([None, None, 0, 2]),  # a given position is set as is
            is_ephemeral=self.rng.random() < 0.15,
        )
        return APPLIED

    def move(self):
        task, to = self.pick(archived_at__isnull=True), self.rng.choice(self.steps())
        if task is None:
            return None
        admission.task_move(task=task, to_step=to, actor=self.actor)
        return APPLIED

    def reorder(self):
        task, to = self.pick(archived_at__isnull=True), self.rng.choice(self.steps())
        if task is None:
            return None
        admission.task_move(task=task, to_step=to, actor=self.actor, position=self.rng.randrange(4))
        return APPLIED  # a rebalanced column comes whole in the message's `orders`

    def bulk_move(self):
        live = self.tasks(archived_at__isnull=True)
        if not live:
            return None
        chosen = self.rng.sample(live, min(len(live), self.rng.randint(2, 4)))
        target = self.rng.choice(self.steps())
        admission.task_bulk_move(task_ids=[t.pk for t in chosen], to_step=target, actor=self.actor)
        return APPLIED

    def archive(self):
        task = self.pick(archived_at__isnull=True)
        if task is None:
            return None
        admission.task_archive(task=task, actor=self.actor)
        return APPLIED

    def restore(self):
        task = self.pick(archived_at__isnull=False)
        if task is None:
            return None
        admission.task_restore(task=task, actor=self.actor)
        return APPLIED

    def delete(self):
        task = self.pick()
        if task is None:
            return None
        admission.task_delete(task=task, actor=self.actor)
        return APPLIED

    def make_permanent(self):
        task = self.pick(archived_at__isnull=True, is_ephemeral=True)
        if task is None:
            return None
        admission.task_make_permanent(task=task, actor=self.actor)
        return APPLIED

    def block_or_unblock(self):
        task = self.pick(archived_at__isnull=True)
        if task is None:
            return None
        if task.blocked_reason:
            services.task_unblock(task=task, actor=self.actor)  # pullable again: may be pulled
        else:
            services.task_block(task=task, actor=self.actor, reason=f"waiting on {self.rng.randrange(9)}")
        return APPLIED

    def edit_task(self):
        task = self.pick()
        if task is None:
            return None
        services.task_update(task=task, actor=self.actor, title=f"{task.title}!", priority=self.rng.randrange(5))
        return APPLIED

    def reclassify(self):
        task = self.pick()
        if task is None:
            return None
        # Expedite cards are pulled first: every standard card's waiting position moves
        to = self.rng.choice([ClassOfService.STANDARD, ClassOfService.EXPEDITE])
        services.task_update(task=task, actor=self.actor, class_of_service=to)
        return APPLIED

    def edit_step(self):
        steps = self.steps()
        step = self.rng.choice(steps)
        fields = self.rng.choice(
            [
                {"wip_limit": self.rng.randrange(4)},  # a raised limit pulls, a lowered one leaves it over
                {"on_full": self.rng.choice([OnFull.QUEUE, OnFull.REJECT])},
                {"pull_from_step_id": self.rng.choice([None, *(s.pk for s in steps if s.pk != step.pk)])},
                {"name": f"{step.name}.", "color": "#123456"},
                {"is_start_step": True},
                {"position": self.rng.randrange(len(steps))},
            ]
        )
        structure.step_update(step=step, actor=self.actor, **fields)
        return APPLIED

    def add_step(self):
        steps = self.steps()
        if len(steps) >= 6:
            return None
        structure.step_create(
            workflow=self.workflow,
            actor=self.actor,
            name=f"Step {len(steps)}",
            position=self.rng.randrange(len(steps) + 1),
            wip_limit=self.rng.randrange(3),
            pull_from_step_id=self.rng.choice(steps).pk,
        )
        return APPLIED

    def delete_step(self):
        steps = self.steps()
        if len(steps) <= 2:
            return None
        step, target = self.rng.sample(steps, 2)
        structure.step_delete(step=step, actor=self.actor, move_tasks_to=target)
        return BUILT

    def rename_board(self):
        structure.workflow_update(workflow=self.workflow, actor=self.actor, name=f"Board {self.titles}")
        return BUILT

    def group_change(self):
        """Create a group over two ungrouped steps, or change or delete one."""
        groups = list(StepGroup.objects.filter(workflow=self.workflow))
        free = [s for s in self.steps() if s.group_id is None]
        if not groups or (len(free) >= 2 and self.rng.random() < 0.4):
            if len(free) < 2:
                return None
            steps = self.rng.sample(free, 2)
            structure.group_create(
                workflow=self.workflow,
                actor=self.actor,
                name="Development",
                wip_limit=2,
                step_ids=[s.pk for s in steps],
            )
            return APPLIED
        group = self.rng.choice(groups)
        if self.rng.random() < 0.2:
            structure.group_delete(group=group, actor=self.actor)
        else:
            structure.group_update(group=group, actor=self.actor, wip_limit=self.rng.randint(1, 4))
        return APPLIED

    def random(self):
        weighted = {
            self.create: 5,
            self.move: 4,
            self.reorder: 1,
            self.bulk_move: 1,
            self.archive: 1,
            self.restore: 1,
            self.delete: 1,
            self.make_permanent: 1,
            self.block_or_unblock: 2,
            self.edit_task: 1,
            self.reclassify: 1,
            self.edit_step: 2,
            self.add_step: 1,
            self.delete_step: 0.5,
            self.rename_board: 0.5,
            self.group_change: 1,
        }
        return self.rng.choices(list(weighted), weights=list(weighted.values()))[0]


def json_of(snapshot) -> dict:
    return orjson.loads(orjson.dumps(snapshot))


def test_a_cached_snapshot_takes_every_change_and_equals_a_fresh_build(
    shared_cache, owner, workflow, django_capture_on_commit_callbacks
):
    # Given a board whose limits pull and queue: Backlog -> Ready (limit 3, pulls from
    # Backlog) -> Doing (limit 2, pulls from Ready) -> Done; Ready and Doing queue when full
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    ready = StepFactory(
        workflow=workflow, name="Ready", position=1, wip_limit=3, pull_from_step=backlog, on_full=OnFull.QUEUE
    )
    StepFactory(workflow=workflow, name="Doing", position=2, wip_limit=2, pull_from_step=ready, on_full=OnFull.QUEUE)
    StepFactory(workflow=workflow, name="Done", position=3)
    changes = RandomChanges(random.Random(SEED), workflow, owner)
    start = Workflow.objects.get(pk=workflow.pk)
    snapshots = {start.version: board_snapshot(workflow=start)}  # version -> the board as read then
    how = {}  # version -> how a reader at the version before gets it

    for _ in range(CHANGES):
        change = changes.random()
        with django_capture_on_commit_callbacks(execute=True):  # the message is kept on commit
            try:
                expected = change()
            except KandevError:  # refused (a full step, a feeder cycle, ...): nothing committed
                expected = None
        current = Workflow.objects.get(pk=workflow.pk)
        if current.version in snapshots:
            continue  # nothing changed
        assert current.version == max(snapshots) + 1 and expected is not None, change.__name__
        how[current.version] = expected

        # When this process reads the board it holds at the version before
        with CaptureQueriesContext(connection) as read:
            snapshot = board_snapshot(workflow=current)

        # Then it is the board a fresh build reads, applied without a query when the
        # message says it all
        fresh = build_snapshot(workflow=current)
        assert json_of(snapshot) == json_of(fresh), change.__name__
        assert (len(read) == 0) == (expected == APPLIED), change.__name__
        # and its JSON, encoded again only where it changed, is the fresh build's
        assert orjson.loads(board_json(workflow=current)[1]) == json_of(fresh), change.__name__
        snapshots[current.version] = snapshot

        # And a reader three versions behind (another process, say) takes them all at once,
        # or builds when any of them cannot be applied
        if (behind := current.version - 3) in snapshots:
            caught_up = updated_snapshot(snapshots[behind], version=current.version)
            if all(how[v] == APPLIED for v in range(behind + 1, current.version + 1)):
                assert json_of(caught_up) == json_of(fresh)
            else:
                assert caught_up is None

    # The random changes reached every path of the board: pulls, promotions, queues, blocks
    kinds = set(TaskEvent.objects.filter(workflow=workflow).values_list("kind", flat=True))
    assert {EventKind.PULLED, EventKind.PROMOTED, EventKind.QUEUED, EventKind.BLOCKED} <= kinds
    assert set(how.values()) == {APPLIED, BUILT}
    assert sum(1 for h in how.values() if h == APPLIED) > CHANGES // 2


def test_a_gap_in_the_kept_changes_builds_the_board(shared_cache, owner, workflow, board, make_task):
    # Given a board read at one version, then a change whose message was never kept (its
    # commit's callbacks did not run here: as if the cache lost it, or it is not written yet)
    done = board[2]
    before = board_snapshot(workflow=Workflow.objects.get(pk=workflow.pk))
    make_task(done, "unseen")
    current = Workflow.objects.get(pk=workflow.pk)

    # Then the cached snapshot cannot be brought up to date, and a read builds the board
    assert updated_snapshot(before, version=current.version) is None
    with CaptureQueriesContext(connection) as read:
        snapshot = board_snapshot(workflow=current)
    assert len(read) > 0
    assert [t["title"] for t in snapshot["steps"][2]["tasks"]] == ["unseen"]


def test_a_change_at_a_columns_end_moves_the_cards_before_it_only_when_an_expedite_card_comes_first(
    shared_cache, owner, workflow, board, make_task, django_capture_on_commit_callbacks
):
    # Given In Progress full (limit 2), pulling from a Backlog of five standard cards, read once
    backlog, doing, _done = board
    with django_capture_on_commit_callbacks(execute=True):
        for title in ("a", "b"):
            make_task(doing, title)
        cards = [make_task(backlog, title) for title in ("c1", "c2", "c3", "c4", "c5")]
    board_json(workflow=Workflow.objects.get(pk=workflow.pk))

    def read():
        current = Workflow.objects.get(pk=workflow.pk)
        with CaptureQueriesContext(connection) as queries:
            encoded = board_json(workflow=current)[1]
        assert len(queries) == 0  # applied, not built
        shown = orjson.loads(encoded)
        assert shown == json_of(build_snapshot(workflow=current))
        return [(t["title"], t["waiting"]["position"]) for t in shown["steps"][0]["tasks"]]

    # When a card joins the end: the four before it keep their places
    with django_capture_on_commit_callbacks(execute=True):
        make_task(backlog, "c6")
    assert read() == [("c1", 1), ("c2", 2), ("c3", 3), ("c4", 4), ("c5", 5), ("c6", 6)]

    # When the last card is expedited: it is pulled first, and every card before it moves down
    with django_capture_on_commit_callbacks(execute=True):
        services.task_update(task=cards[-1], actor=owner, class_of_service=ClassOfService.EXPEDITE)
    assert read() == [("c1", 2), ("c2", 3), ("c3", 4), ("c4", 5), ("c5", 1), ("c6", 6)]

    # When another card joins the end: the expedited card before it is still first
    with django_capture_on_commit_callbacks(execute=True):
        make_task(backlog, "c7")
    assert read() == [("c1", 2), ("c2", 3), ("c3", 4), ("c4", 5), ("c5", 1), ("c6", 6), ("c7", 7)]
