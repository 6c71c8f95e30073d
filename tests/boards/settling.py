"""What "the board is settled" means (product.md §3), read from the database alone.

Settled: no step with room has a task waiting in its own overflow queue, and no limited
step with room has a pullable task in its feeder. Pullable: live (not archived, not
ephemeral), admitted, not blocked, and no agent session starting or running on it. Written against the
tables, not the services, so it judges the services instead of repeating them.
"""

from collections import Counter

from agents.models import SessionStatus
from boards.models import Task
from workflows.models import WorkflowStep


def unsettled(workflow) -> list[str]:
    """Why the board is not settled, one line per step that could admit something; [] if settled."""
    steps = {s.pk: s for s in WorkflowStep.objects.filter(workflow=workflow)}
    live = Task.objects.filter(workflow=workflow, archived_at__isnull=True, is_ephemeral=False)
    occupied = Counter(live.filter(admitted=True).values_list("step_id", flat=True))
    queued = Counter(live.filter(admitted=False).values_list("step_id", flat=True))
    pullable = Counter(
        live.filter(admitted=True, blocked_reason="")
        .exclude(agent_sessions__status__in=[SessionStatus.STARTING, SessionStatus.RUNNING])
        .values_list("step_id", flat=True)
    )
    problems = []
    for step in sorted(steps.values(), key=lambda s: s.position):
        limited = step.wip_limit > 0
        if limited and occupied[step.pk] >= step.wip_limit:
            continue
        room = f"{step.name} ({occupied[step.pk]}/{step.wip_limit or 'unlimited'})"
        if queued[step.pk]:
            problems.append(f"{room} has room and {queued[step.pk]} task(s) in its own queue")
        feeder = steps.get(step.pull_from_step_id)
        if limited and feeder is not None and pullable[feeder.pk]:
            problems.append(f"{room} has room and its feeder {feeder.name} has {pullable[feeder.pk]} pullable task(s)")
    return problems
