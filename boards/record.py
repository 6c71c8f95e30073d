"""What a board change did, as the history and the live viewers get it.

`ChangeRecord` collects the change's events (written as its history when it closes), the
tasks and steps it touched, and what the live message names as its cause (`announce`);
`boards.change.close_change()` writes the history and builds the message from it.

One fact of the history is also kept on the task's own row, written with the event that
makes it: `Task.started_at`, its first admission into an active step (its cycle's start,
boards/placement.py `start()`), so a card shows its age against its service level without
reading the history.
"""

from boards.models import TaskEvent
from workflows.models import StepKind


class ChangeRecord:
    def __init__(self, workflow, actor=None):
        self.workflow = workflow
        self.actor = actor
        self.events: list = []
        self.tasks: dict = {}  # task id -> the instance this change wrote
        self.touched: set = set()  # step ids whose figures the message carries
        self.deleted: set = set()  # task ids
        self.created: set = set()  # task ids created in this change
        self.orders: dict = {}  # step id -> [{"id", "position"}] in board order, when rebalanced
        self.lanes: set = set()  # lane ids whose figures the message carries (besides its tasks')
        self.session_tasks: set = set()  # task ids whose agent session changed
        self.agents = False  # the message carries the board's agent figures
        self.message: dict | None = None
        self.dirty = False
        # Tasks that became finished or unfinished (a done step entered or left, archived,
        # restored): their dependents' `blocked_by` follows before the change settles
        # (boards/dependencies.py takes them from here).
        self.finishing: set = set()

    def event(self, task, kind: str, *, from_step=None, to_step=None, reason="", **detail) -> None:
        """An event of the history; the task and the steps go in the message."""
        self.dirty = True
        self.tasks[task.pk] = task
        if _finishes_or_reopens(from_step, to_step, detail.get("action")):
            self.finishing.add(task.pk)
        for step in (from_step, to_step):
            if step is not None:
                self.touched.add(step.pk)
        self.events.append(
            TaskEvent(
                workflow=self.workflow,
                task_id=task.pk,
                kind=kind,
                # Ids, not instances: the history outlives a step deleted in this same change.
                from_step_id=from_step.pk if from_step else None,
                to_step_id=to_step.pk if to_step else None,
                actor=self.actor,
                reason=reason,
                detail=detail,
            )
        )

    def restored(self, task, step, events: list) -> None:
        """A task brought in with its history (a backup): its events as they were, not this
        change's; the message carries the task."""
        for event in events:
            event.workflow, event.task_id = self.workflow, task.pk
        self.events.extend(events)
        self.changed(task, step)

    def changed(self, task, step) -> None:
        """A task changed without an event of its own (an edit): the message carries it."""
        self.touch(step)
        self.tasks[task.pk] = task

    def touch(self, *steps) -> None:
        self.dirty = True
        self.touched.update(step.pk for step in steps)

    def lanes_touched(self, *lanes) -> None:
        """Lanes whose settings or occupancy changed other than through the tasks the message carries."""
        self.dirty = True
        self.lanes.update(lane.pk for lane in lanes)

    def announce(self, type_: str, **payload) -> None:
        """Name the change for live viewers; the first announcement wins (it is the cause)."""
        if self.message is None:
            self.message = {"type": type_, **payload}

    def session_changed(self, task_id) -> None:
        """The agent session of a task of this board changed: the message carries the task."""
        self.dirty = True
        self.session_tasks.add(task_id)

    def agents_changed(self) -> None:
        """The board's agent figures (sessions holding or waiting for a slot, or their limits)
        may have changed: the message carries them."""
        self.dirty = True
        self.agents = True


def _finishes_or_reopens(from_step, to_step, action) -> bool:
    """Does an event of a live task change whether it is finished (`boards.models.UNFINISHED`)?
    A deletion is followed before the task's links go with it (`dependencies.forget`)."""
    if action == "archive":
        return from_step is not None and from_step.kind != StepKind.DONE
    if action == "restore":
        return to_step is not None and to_step.kind != StepKind.DONE
    if from_step is None or to_step is None:
        return False
    return (from_step.kind == StepKind.DONE) != (to_step.kind == StepKind.DONE)
