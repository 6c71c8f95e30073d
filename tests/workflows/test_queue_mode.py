"""Overflow queue mode (`on_full: queue`): queue, promote, leave the queue,
bulk moves, and the race of many admissions into a small limit on PostgreSQL."""

import contextlib
import threading

import pytest
from django.db import connection, transaction

from boards import admission
from boards.models import EventKind, Task, TaskEvent
from tests.concurrency import race_ok
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from workflows.models import OnFull, Role


@pytest.fixture
def queue_board(board):
    """The conftest board with In Progress (limit 2, fed by Backlog) in queue mode."""
    backlog, doing, done = board
    doing.on_full = OnFull.QUEUE
    doing.save(update_fields=["on_full"])
    return backlog, doing, done


def queued_titles(step):
    tasks = Task.objects.queued().filter(step=step).order_by("queued_at", "position", "id")
    return list(tasks.values_list("title", flat=True))


def admitted_titles(step):
    return sorted(Task.objects.occupying().filter(step=step).values_list("title", flat=True))


def step_on_board(api, step):
    board = api.get(f"/api/v1/workflows/{step.workflow_id}/board/").json()
    return next(s for s in board["steps"] if s["id"] == str(step.pk))


class TestApi:
    def test_queued_create_and_move_answer_202_and_the_board_counts_the_queue(self, api, queue_board, make_task):
        backlog, doing, _ = queue_board
        make_task(doing, "a")
        make_task(doing, "b")
        created = api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "c"}, format="json")
        assert created.status_code == 202
        assert created.json()["admitted"] is False
        assert created.json()["queued_at"] is not None
        waiting = make_task(backlog, "d")
        moved = api.post(f"/api/v1/tasks/{waiting.pk}/move/", {"step_id": str(doing.pk)}, format="json")
        assert moved.status_code == 202
        assert moved.json()["step_id"] == str(doing.pk)
        column = step_on_board(api, doing)
        assert (column["occupied"], column["queued"], column["over_limit"]) == (2, 2, False)
        assert [t["admitted"] for t in column["tasks"]] == [True, True, False, False]
        kinds = TaskEvent.objects.filter(task_id__in=[created.json()["id"], waiting.pk], to_step=doing)
        assert sorted(kinds.values_list("kind", flat=True)) == [EventKind.QUEUED, EventKind.QUEUED]

    def test_an_admitted_create_into_a_queue_mode_step_is_still_201(self, api, queue_board):
        _, doing, _ = queue_board
        created = api.post("/api/v1/tasks/", {"step_id": str(doing.pk), "title": "a"}, format="json")
        assert created.status_code == 201
        assert created.json()["admitted"] is True

    def test_a_queued_task_moved_away_leaves_the_queue_and_frees_nothing(self, api, queue_board, make_task):
        backlog, doing, done = queue_board
        make_task(doing, "a")
        make_task(doing, "b")
        first = make_task(doing, "q1")
        make_task(doing, "q2")
        make_task(backlog, "feeder task")
        moved = api.post(f"/api/v1/tasks/{first.pk}/move/", {"step_id": str(done.pk)}, format="json")
        assert moved.status_code == 200
        assert moved.json()["admitted"] is True
        assert moved.json()["queued_at"] is None
        assert queued_titles(doing) == ["q2"]
        assert admitted_titles(doing) == ["a", "b"]
        assert Task.objects.get(title="feeder task").step == backlog
        assert not TaskEvent.objects.filter(kind__in=[EventKind.PROMOTED, EventKind.PULLED]).exists()

    def test_a_queued_task_archived_leaves_the_queue(self, api, queue_board, make_task):
        _, doing, _ = queue_board
        make_task(doing, "a")
        make_task(doing, "b")
        queued = make_task(doing, "q1")
        assert api.post(f"/api/v1/tasks/{queued.pk}/archive/").status_code == 200
        column = step_on_board(api, doing)
        assert (column["occupied"], column["queued"]) == (2, 0)
        assert queued_titles(doing) == []

    def test_the_queue_is_promoted_before_the_feeder_then_the_feeder_pulls(self, owner, queue_board, make_task):
        backlog, doing, done = queue_board
        a, b = make_task(doing, "a"), make_task(doing, "b")
        make_task(doing, "q1")
        make_task(backlog, "critical", priority=0)
        admission.task_move(task=a, to_step=done, actor=owner)
        assert admitted_titles(doing) == ["b", "q1"]
        admission.task_move(task=b, to_step=done, actor=owner)
        assert admitted_titles(doing) == ["critical", "q1"]
        promoted = TaskEvent.objects.get(kind=EventKind.PROMOTED)
        assert promoted.to_step == doing
        assert promoted.detail["waited_seconds"] >= 0


class TestBulkMove:
    def test_admits_what_fits_and_queues_the_rest_in_the_given_order(self, api, owner, queue_board, make_task):
        backlog, doing, done = queue_board
        first = make_task(doing, "first")
        movers = [make_task(done, title) for title in ("m1", "m2", "m3", "m4")]
        order = [movers[2], movers[0], movers[3], movers[1]]
        response = api.post(
            "/api/v1/tasks/bulk-move/",
            {"task_ids": [str(t.pk) for t in order], "step_id": str(doing.pk)},
            format="json",
        )
        assert response.status_code == 200
        assert [(t["title"], t["admitted"]) for t in response.json()] == [
            ("m3", True),
            ("m1", False),
            ("m4", False),
            ("m2", False),
        ]
        assert queued_titles(doing) == ["m1", "m4", "m2"]
        # Capacity opens one slot at a time: promotions follow the given order.
        promoted = []
        for leaving in [first, movers[2], movers[0]]:
            admission.task_move(task=leaving, to_step=done, actor=owner)
            promoted.append(TaskEvent.objects.filter(kind=EventKind.PROMOTED).latest("id").task.title)
        assert promoted == ["m1", "m4", "m2"]

    def test_into_a_full_rejecting_step_moves_nothing(self, api, board, make_task):
        _, doing, done = board
        make_task(doing, "a")
        movers = [make_task(done, t) for t in ("m1", "m2")]
        response = api.post(
            "/api/v1/tasks/bulk-move/",
            {"task_ids": [str(t.pk) for t in movers], "step_id": str(doing.pk)},
            format="json",
        )
        assert response.status_code == 409
        assert Task.objects.filter(step=done).count() == 2


# --- races on PostgreSQL: real threads, one connection each, released by a barrier ----------

ROUNDS = 20


def race(workers) -> None:
    """Run each callable in its own thread (and database connection), all released at once."""
    race_ok(len(workers), lambda i: workers[i]())


def new_board(owner, *, limit: int, fed: bool):
    """Inbox -> Doing (queue mode, `limit`, fed by Inbox when `fed`) -> Done."""
    workflow = WorkflowFactory()
    MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
    inbox = StepFactory(workflow=workflow, name="Inbox", position=0, is_start_step=True)
    doing = StepFactory(
        workflow=workflow,
        name="Doing",
        position=1,
        wip_limit=limit,
        on_full=OnFull.QUEUE,
        pull_from_step=inbox if fed else None,
    )
    done = StepFactory(workflow=workflow, name="Done", position=2)
    return inbox, doing, done


def create(owner, step, title):
    return lambda: admission.task_create(workflow=step.workflow, step=step, actor=owner, title=title)


def move(owner, task, step):
    return lambda: admission.task_move(task=task, to_step=step, actor=owner)


def bulk_move(owner, tasks, step):
    ids = [task.pk for task in tasks]
    return lambda: admission.task_bulk_move(task_ids=ids, to_step=step, actor=owner)


def queue_order(step) -> list:
    queued = Task.objects.queued().filter(step=step).order_by("queued_at", "position", "id")
    return list(queued.values_list("id", flat=True))


def replay(step, limit: int) -> tuple[set, list]:
    """Check the board's committed history, in commit order, against the queue-mode rules and
    return the step's (admitted, queue) as the rules say they must be now."""
    admitted, queue = set(), []
    for event in TaskEvent.objects.filter(workflow_id=step.workflow_id).order_by("id"):
        if event.detail.get("action") not in ("promote", "pull"):
            # A new transaction starts: the last one left no free slot while tasks waited.
            assert not queue or len(admitted) == limit
        entering = event.to_step_id == step.pk and event.from_step_id != step.pk
        leaving = event.from_step_id == step.pk and event.to_step_id != step.pk
        if leaving:
            (admitted.remove if event.task_id in admitted else queue.remove)(event.task_id)
        if not entering:
            continue
        if event.kind == EventKind.QUEUED:
            assert len(admitted) == limit, "queued although a slot was free"
            queue.append(event.task_id)
            continue
        assert len(admitted) < limit, f"{event.kind} over the limit"
        if event.kind == EventKind.PROMOTED:
            assert queue and queue[0] == event.task_id, "promoted out of queue order"
            queue.pop(0)
        elif event.kind == EventKind.PULLED:
            assert not queue, "pulled from the feeder while tasks were queued"
        admitted.add(event.task_id)
    return admitted, queue


@pytest.mark.django_db(transaction=True)
def test_concurrent_admissions_admit_k_and_queue_the_rest_in_commit_order():
    owner = UserFactory()
    limit, creators, movers = 3, 4, 4
    for _ in range(ROUNDS):
        inbox, doing, _ = new_board(owner, limit=limit, fed=False)
        waiting = [
            admission.task_create(workflow=inbox.workflow, step=inbox, actor=owner, title=f"m{i}").task
            for i in range(movers)
        ]
        race([create(owner, doing, f"c{i}") for i in range(creators)] + [move(owner, task, doing) for task in waiting])
        arrivals = list(TaskEvent.objects.filter(to_step=doing).order_by("id").values_list("task_id", "kind"))
        assert len(arrivals) == creators + movers
        assert {kind for _, kind in arrivals[:limit]} <= {EventKind.CREATED, EventKind.MOVED}
        assert {kind for _, kind in arrivals[limit:]} == {EventKind.QUEUED}
        admitted = set(Task.objects.occupying().filter(step=doing).values_list("id", flat=True))
        assert admitted == {task_id for task_id, _ in arrivals[:limit]}
        assert queue_order(doing) == [task_id for task_id, _ in arrivals[limit:]]
        queued_at = list(Task.objects.filter(pk__in=queue_order(doing)).values_list("queued_at", flat=True))
        assert len(set(queued_at)) == len(queued_at)
        assert replay(doing, limit) == (admitted, queue_order(doing))


@pytest.mark.django_db(transaction=True)
def test_promotions_never_exceed_the_limit_while_tasks_leave_and_arrive_concurrently():
    owner = UserFactory()
    limit = 3
    for _ in range(ROUNDS):
        inbox, doing, done = new_board(owner, limit=limit, fed=True)
        working = [create(owner, doing, f"w{i}")().task for i in range(limit)]
        create(owner, doing, "queued early")()
        feeder = [create(owner, inbox, f"i{i}")().task for i in range(4)]
        race(
            [move(owner, task, done) for task in working]
            + [create(owner, doing, f"c{i}") for i in range(3)]
            + [move(owner, task, doing) for task in feeder[:2]]
            + [bulk_move(owner, feeder[2:], doing)]
        )
        admitted, queue = replay(doing, limit)
        assert len(admitted) == limit
        assert set(Task.objects.occupying().filter(step=doing).values_list("id", flat=True)) == admitted
        assert queue_order(doing) == queue
        live = Task.objects.live()
        assert live.filter(step=done).count() == limit
        assert live.filter(step__in=[inbox, doing]).count() == 1 + 4 + 3


@contextlib.contextmanager
def referred_to_meanwhile(task):
    """Another connection holds the key-share lock a row referring to `task` takes while it is
    written (a watch or a notification, written after a change and outside the board's lock)."""
    held, done = threading.Event(), threading.Event()

    def writer():
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                cursor.execute(f"SELECT 1 FROM {Task._meta.db_table} WHERE id = %s FOR KEY SHARE", [task.pk])
                held.set()
                done.wait(30)
        finally:
            connection.close()

    thread = threading.Thread(target=writer)
    thread.start()
    assert held.wait(30)
    try:
        yield
    finally:
        done.set()
        thread.join()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("fed", [False, True])
def test_a_task_referred_to_meanwhile_keeps_its_place_in_the_queue_and_the_feeder(fed):
    """The head of the queue (or, with the queue empty, of the feeder) is promoted (pulled)
    even while a row referring to it is being written: it is not skipped as if a mover held it."""
    owner = UserFactory()
    inbox, doing, done = new_board(owner, limit=1, fed=fed)
    working = create(owner, doing, "working")().task
    head = create(owner, inbox if fed else doing, "first")().task
    create(owner, inbox if fed else doing, "second")()

    with referred_to_meanwhile(head):
        move(owner, working, done)()

    head.refresh_from_db()
    assert (head.step_id, head.admitted) == (doing.pk, True)
    kind = EventKind.PULLED if fed else EventKind.PROMOTED
    assert TaskEvent.objects.filter(kind=kind, to_step=doing).get().task_id == head.pk
