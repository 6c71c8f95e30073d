"""A month of generated history for the demo board (seed_demo), so the flow page has
something to show on first run: two people finishing tasks one after another, each
committed from Backlog to Ready, pulled into In Progress, moved to Review and into Done,
archived a day later (the board stays as seed_demo always showed it). About one task in
four was blocked for a while in In Progress, most with a blocker type of the workspace;
In Progress's limit was lowered from 4 to its present 3 half-way through, so the ledger,
the limit experiments and the blocker clusters have something to show too."""

import random
from datetime import timedelta

from django.utils import timezone

from boards.blocker_types import block_detail
from boards.models import BlockerType, EventKind, Task, TaskEvent
from workflows.models import ConfigChange, LimitScope

DAYS = 30
BLOCKS = [  # (type, reason); a block without a type keeps only its reason
    ("Waiting on another team", "Needs the API team's review"),
    ("Waiting on another team", "Blocked by the design sign-off"),
    ("Test environment down", "Staging is down"),
    (None, "Question to the customer"),
]


def seed_month(board, actor) -> int:
    """Write finished tasks and their events over the last month; the number of tasks."""
    steps = list(board.steps.order_by("position"))
    backlog, ready, doing, review, done = steps  # the Kanban template's
    lane = board.lanes.order_by("position").first()
    rng = random.Random(16)  # the same month on every fresh database
    start = timezone.now() - timedelta(days=DAYS)
    types = {
        name: BlockerType.objects.get_or_create(workspace_id=board.workspace_id, name=name)[0]
        for name in {name for name, _ in BLOCKS if name}
    }
    lowered = start + timedelta(days=DAYS / 2)
    ConfigChange.objects.create(
        workspace_id=board.workspace_id,
        workflow=board,
        scope=LimitScope.STEP,
        subject_id=str(doing.pk),
        name=doing.name,
        field="wip_limit",
        before=4,
        after=doing.wip_limit,
        actor=actor,
        at=lowered,
    )
    tasks, events, times = [], [], []
    for _person in range(2):
        at = start + timedelta(hours=rng.uniform(0, 12))
        while True:
            created = at - timedelta(hours=rng.uniform(2, 72))
            committed = created + (at - created) * rng.random()
            started = at
            reviewed = started + timedelta(hours=rng.lognormvariate(2.8, 0.6))
            block = None
            if rng.random() < 0.25:
                blocked_at = started + (reviewed - started) * rng.uniform(0.2, 0.8)
                held = timedelta(hours=rng.lognormvariate(2.0, 0.6))
                block = (*rng.choice(BLOCKS), blocked_at, blocked_at + held)
                reviewed += held
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
            if block:
                type_name, reason, blocked_at, unblocked_at = block
                detail = block_detail(types.get(type_name))
                events.append(
                    TaskEvent(
                        workflow=board,
                        task=task,
                        kind=EventKind.BLOCKED,
                        actor=actor,
                        reason=reason,
                        detail={"action": "block", **detail},
                    )
                )
                events.append(
                    TaskEvent(
                        workflow=board, task=task, kind=EventKind.UNBLOCKED, actor=actor, detail={"action": "unblock"}
                    )
                )
                times += [blocked_at, unblocked_at]
            at = finished + timedelta(hours=rng.uniform(0.5, 10))
    Task.objects.bulk_create(tasks)
    TaskEvent.objects.bulk_create(events)
    # `at` is auto_now_add (bulk_create stamps "now"); bulk_update writes the history's times.
    for event, when in zip(events, times, strict=True):
        event.at = when
    TaskEvent.objects.bulk_update(events, ["at"], batch_size=500)
    return len(tasks)
