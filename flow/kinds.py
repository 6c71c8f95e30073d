"""Step kinds as flow metrics read them (product.md §2b.1).

Steps have no `kind` field yet: until they do, the first step of a board (by position)
is `backlog`, the last is `done` and the rest are `active`. This is the one place that
decides it; it switches to `step.kind` when the field exists. A step that was deleted
has no kind left: the metrics treat it as `active`, the field's default.
"""

from dataclasses import dataclass

from workflows.models import WorkflowStep

BACKLOG, ACTIVE, DONE = "backlog", "active", "done"


def step_kinds(steps: list[WorkflowStep]) -> dict:
    """{step id: kind} for all the steps of one board."""
    ordered = sorted(steps, key=lambda s: s.position)
    kinds = {step.pk: ACTIVE for step in ordered}
    if ordered:
        kinds[ordered[0].pk] = BACKLOG
        kinds[ordered[-1].pk] = DONE  # a one-step board: its only step is where work ends
    return kinds


@dataclass(frozen=True)
class BoardSteps:
    """A board's steps in position order, with their kinds."""

    steps: list
    kinds: dict

    @classmethod
    def of(cls, workflow) -> "BoardSteps":
        steps = list(WorkflowStep.objects.filter(workflow=workflow).order_by("position"))
        return cls(steps=steps, kinds=step_kinds(steps))

    def ids(self, kind: str) -> list:
        return [step_id for step_id, k in self.kinds.items() if k == kind]

    @property
    def active(self) -> list:
        return [s for s in self.steps if self.kinds[s.pk] == ACTIVE]
