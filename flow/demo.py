"""A month of generated history for the demo board (seed_demo), so the flow page has
something to show on first run: two people finishing tasks one after another, each
committed from Backlog to Ready, pulled into In Progress, moved to Review and into Done,
archived a day later (the board stays as seed_demo always showed it)."""

import random
from datetime import timedelta

from django.utils import timezone

from boards.models import EventKind, Task, TaskEvent

DAYS = 30


def seed_month(board, actor) -> int:
    """Write finished tasks and their events over the last month; the number of tasks."""
    steps = list(board.steps.order_by("position"))
    backlog, ready, doing, review, done = steps  # the Kanban template's
    lane = board.lanes.order_by("position").first()
    rng = random.Random(16)  # the same month on every fresh database
    start = timezone.now() - timedelta(days=DAYS)
    tasks, events, times = [], [], []
    for _person in range(2):
        at = start + timedelta(hours=rng.uniform(0, 12))
        while True:
            created = at - timedelta(hours=rng.uniform(2, 72))
            committed = created + (at - created) * rng.random()
            started = at
            reviewed = started + timedelta(hours=rng.lognormvariate(2.8, 0.6))
            finished = reviewed + timedelta(hours=rng.lognormvariate(1.5, 0.7))
            if finished > timezone.now() - timedelta(hours=1):
                break
            archived = finished + timedelta(days=1)
            task = Task(
                workflow=board,
                step=done,
                lane=lane,
                title=f"Past task {len(tasks) + 1}",
                entered_step_at=finished,
                archived_at=min(archived, timezone.now()),
            )
            tasks.append(task)
            for kind, src, dst, when in (
                (EventKind.CREATED, None, backlog, created),
                (EventKind.MOVED, backlog, ready, committed),
                (EventKind.PULLED, ready, doing, started),
                (EventKind.MOVED, doing, review, reviewed),
                (EventKind.MOVED, review, done, finished),
                (EventKind.ARCHIVED, done, None, task.archived_at),
            ):
                events.append(
                    TaskEvent(
                        workflow=board,
                        task=task,
                        kind=kind,
                        from_step=src,
                        to_step=dst,
                        actor=actor if kind in (EventKind.MOVED, EventKind.ARCHIVED) else None,
                    )
                )
                times.append(when)
            at = finished + timedelta(hours=rng.uniform(0.5, 10))
    Task.objects.bulk_create(tasks)
    TaskEvent.objects.bulk_create(events)
    # `at` is auto_now_add (bulk_create stamps "now"); bulk_update writes the history's times.
    for event, when in zip(events, times, strict=True):
        event.at = when
    TaskEvent.objects.bulk_update(events, ["at"], batch_size=500)
    return len(tasks)
