"""One change of a board, from its locks to its live message: four parts, one job each.

- `board` (locking.py): the locked workflow, its steps and the task rows it locked;
- `occupancy` (occupancy.py): the ledger of what every limit counts, read after the locks;
- `record` (record.py): the history it writes and what the live message carries;
- `worklist` (worklist.py): the steps it leaves to settle (pull.py).

A door reads top to bottom: `open_change()` locks, `placement.decide()` decides, the door
writes (telling the ledger what entered and left), `pull.settle()` settles, and
`close_change()` writes the history and registers the broadcast (events.py).
"""

import dataclasses
from contextlib import contextmanager
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from boards.events import publish_change_on_commit
from boards.locking import LockedBoard, lock_board, take_back_bump
from boards.messages import change_message
from boards.occupancy import Occupancy
from boards.record import ChangeRecord
from boards.signals import board_changed
from boards.worklist import Worklist
from common import sql
from workflows.models import Workflow, WorkflowStep


@dataclass
class BoardChange:
    board: LockedBoard
    occupancy: Occupancy
    record: ChangeRecord
    worklist: Worklist
    actor: object = None
    now: object = field(default_factory=timezone.now)

    @property
    def workflow(self) -> Workflow:
        return self.board.workflow

    @property
    def steps(self) -> dict:
        return self.board.steps

    @contextmanager
    def savepoint(self):
        """A savepoint that also owns this change's state: on any error inside, the database
        and every part of the change (counts, events, marks, ...) go back to where they were,
        and the error goes on."""
        parts = (self.board, self.occupancy, self.record, self.worklist)
        saved = [{name: _copied(value) for name, value in vars(part).items()} for part in parts]
        try:
            with transaction.atomic():
                yield self
        except BaseException:
            for part, values in zip(parts, saved, strict=True):
                vars(part).update(values)
            raise


def _copied(value):
    if isinstance(value, dict):  # counts and persons are mutable records: copy them too
        return {k: dataclasses.replace(v) if dataclasses.is_dataclass(v) else v for k, v in value.items()}
    return value.copy() if isinstance(value, (set, list)) else value


def open_change(workflow_id, *, actor=None, task_id=None) -> BoardChange:
    """The board locked (with the task `task_id`, when the change is about one) and its counts."""
    board, counted = lock_board(workflow_id, task_id=task_id)
    return BoardChange(board, Occupancy(board, counted), ChangeRecord(board.workflow, actor), Worklist(board), actor)


def close_change(change: BoardChange) -> None:
    """Write the change's history; on commit keep its live message for the board's readers
    (before sending it, so a viewer who reads the board on receiving it finds it kept) and
    send it. A change that changed nothing takes its version bump back."""
    record = change.record
    if not record.dirty:
        take_back_bump(change.board)
        return
    for event in record.events:  # ties each event to its commit: history replays change by change
        event.detail["version"] = change.board.version
    message = change_message(change, sql.insert_statements(record.events))  # sent with the message's read
    publish_change_on_commit(change.workflow.pk, message)
    workflow, events = change.workflow, record.events

    def tell_board_changed():  # named: robust on_commit logs a failure by __qualname__
        board_changed.send(sender=BoardChange, workflow=workflow, events=events, message=message)

    transaction.on_commit(tell_board_changed, robust=True)


@dataclass
class BoardView:
    """The board as a read sees it, without locks: the same counts and limits an admission
    would judge by, for explaining them (boards/waiting.py)."""

    board: LockedBoard
    occupancy: Occupancy

    @property
    def steps(self) -> dict:
        return self.board.steps


def board_view(workflow: Workflow) -> BoardView:
    steps = {s.pk: s for s in WorkflowStep.objects.filter(workflow=workflow)}
    board = LockedBoard(workflow=workflow, steps=steps, read_only=True)
    return BoardView(board, Occupancy(board))
