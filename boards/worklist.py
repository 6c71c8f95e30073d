"""What a change leaves to settle: the steps that may now admit something.

A step is marked when room may have opened in it (a task left it, its group, one of its
cells or a lane it may admit work of, a limit rose, a feeder was set, a person it may admit
work for has fewer tasks) or when a pullable task arrived in its feeder. The marks that
follow from counts come from the occupancy ledger's `changes()`; the others from the
services that cause them. `settle()` (pull.py) fills the marked steps until none is left.
"""

from boards.locking import LockedBoard
from boards.occupancy import Occupancy
from workflows.models import OnFull, WorkflowStep


class Worklist:
    def __init__(self, board: LockedBoard):
        self.board = board
        self.unsettled: set = set()  # step ids that may now admit something
        self.filled: set = set()  # (step id, task id) admitted by a fill in this change
        self.freed: set = set()  # assignees with less active work: their other boards may fill
        self.dependents: set = set()  # task ids of this board whose blockers may have changed
        self.elsewhere: dict = {}  # other boards of the workspace: {workflow id: such task ids}

    def opened(self, *steps) -> None:
        """Room may have opened in `steps`: they fill before the change commits."""
        self.unsettled.update(step.pk for step in steps)

    def arrived(self, step: WorkflowStep) -> None:
        """A pullable task arrived in `step`: the limited steps it feeds may pull it."""
        self.opened(*self.board.consumers(step))

    def next(self, occupancy: Occupancy) -> WorkflowStep | None:
        """The first marked step in board order, once what the counts did is marked too."""
        fewer, more, freed, cells = occupancy.changes()
        for step in fewer:
            group = self.board.group(step)
            self.opened(step, *(self.board.group_steps(group) if group is not None else ()))
        for step in more:
            self.arrived(step)
        if freed:
            self.freed.update(person.user_id for person in freed)
        lane_freed = any(
            step.is_active and (lane := self.board.lanes.get(lane_id)) is not None and lane.wip_limit
            for step, lane_id in cells
        )
        if freed or lane_freed:
            # Work a pull skipped for its assignee or its lane may go in any active step that
            # fills; a queue-mode step queues for them even without a limit of its own.
            may_fill = (s for s in self.board.steps.values() if self.board.limited(s) or s.on_full == OnFull.QUEUE)
            self.opened(*(s for s in may_fill if s.is_active))
        self.unsettled &= self.board.steps.keys()  # a step deleted in this change fills nothing
        if not self.unsettled:
            return None
        step = min((self.board.steps[pk] for pk in self.unsettled), key=lambda s: s.position)
        self.unsettled.discard(step.pk)
        return step
