"""Step kinds as flow metrics read them: each step's `kind` field.

A step that was deleted has no kind left: the metrics treat it as `active`, the field's
default.
"""

from dataclasses import dataclass

from workflows.models import StepKind, WorkflowStep

BACKLOG, ACTIVE, DONE = StepKind.BACKLOG, StepKind.ACTIVE, StepKind.DONE


@dataclass(frozen=True)
class BoardSteps:
    """A board's steps in position order, with their kinds."""

    steps: list
    kinds: dict

    @classmethod
    def of(cls, workflow) -> "BoardSteps":
        steps = list(WorkflowStep.objects.filter(workflow=workflow).order_by("position"))
        return cls(steps=steps, kinds={step.pk: step.kind for step in steps})

    def ids(self, kind: str) -> list:
        return [step_id for step_id, k in self.kinds.items() if k == kind]

    @property
    def active(self) -> list:
        return [s for s in self.steps if self.kinds[s.pk] == ACTIVE]
