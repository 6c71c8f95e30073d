"""What "the board is settled" means, read from the database alone.

Settled: no step with room (in itself and in its group) has a task waiting in its own
overflow queue, and no limited step with room has a pullable task in its feeder. Pullable:
live (not archived, not ephemeral), admitted, not blocked, no blocker of it unfinished (not
archived and not in a done step), no agent session starting or running on it, room in its
lane's cell of the step, and, when it would start to count in an active step, an assignee
below their personal limit and its lane below the lane's limit. A step in a group is limited
by the group, except for a pull from a step of the same group. Written against the tables,
not the services, so it judges the services instead of repeating them.
"""

from collections import Counter

from django.db.models import Exists, OuterRef

from agents.models import SessionStatus
from boards.models import EventKind, Task, TaskEvent, TaskLink
from workflows.models import Lane, LaneCell, Membership, StepGroup, StepKind, WorkflowStep


def unsettled(workflow) -> list[str]:
    """Why the board is not settled, one line per step that could admit something; [] if settled."""
    steps = {s.pk: s for s in WorkflowStep.objects.filter(workflow=workflow)}
    groups = {g.pk: g for g in StepGroup.objects.filter(workflow=workflow)}
    live = Task.objects.filter(workflow=workflow, archived_at__isnull=True, is_ephemeral=False)
    occupied = Counter(live.filter(admitted=True).values_list("step_id", flat=True))
    in_group = Counter()
    for step in steps.values():
        if step.group_id:
            in_group[step.group_id] += occupied[step.pk]
    limits = dict(
        Membership.objects.filter(workspace_id=workflow.workspace_id, wip_limit__gt=0).values_list(
            "user_id", "wip_limit"
        )
    )
    working = Counter(
        Task.objects.filter(
            workflow__workspace_id=workflow.workspace_id,
            archived_at__isnull=True,
            is_ephemeral=False,
            admitted=True,
            step__kind=StepKind.ACTIVE,
            assignee_id__in=limits,
        ).values_list("assignee_id", flat=True)
    )

    def has_room(task):  # the assignee's, if the task would start to count in an active step
        return task.assignee_id not in limits or working[task.assignee_id] < limits[task.assignee_id]

    lanes = {lane.pk: lane.wip_limit for lane in Lane.objects.filter(workflow=workflow)}
    cells = {(c.lane_id, c.step_id): c.wip_limit for c in LaneCell.objects.filter(lane__workflow=workflow)}
    in_cell = Counter(live.filter(admitted=True).values_list("lane_id", "step_id"))
    in_lane = Counter(live.filter(admitted=True, step__kind=StepKind.ACTIVE).values_list("lane_id", flat=True))

    def lane_room(task, step, source):  # its cell's in `step`, and its lane's when it starts to count there
        cell = (task.lane_id, step.pk)
        if cell in cells and in_cell[cell] >= cells[cell]:
            return False
        starts = step.kind == StepKind.ACTIVE and (source is None or source.kind != StepKind.ACTIVE)
        return not (starts and lanes[task.lane_id] and in_lane[task.lane_id] >= lanes[task.lane_id])

    queued = live.filter(admitted=False)
    pullable = (
        live.filter(admitted=True, blocked_reason="")
        .exclude(agent_sessions__status__in=[SessionStatus.STARTING, SessionStatus.RUNNING])
        .exclude(Exists(unfinished_blockers().filter(dependent=OuterRef("pk"))))
    )
    problems = []
    for step in sorted(steps.values(), key=lambda s: s.position):
        group = groups.get(step.group_id)
        if step.wip_limit and occupied[step.pk] >= step.wip_limit:
            continue
        group_full = group is not None and in_group[group.pk] >= group.wip_limit
        room = f"{step.name} ({occupied[step.pk]}/{step.wip_limit or 'unlimited'})"
        person_applies = step.kind == StepKind.ACTIVE
        waiting = [
            t for t in queued.filter(step=step) if (not person_applies or has_room(t)) and lane_room(t, step, None)
        ]
        if waiting and not group_full:
            problems.append(f"{room} has room and {len(waiting)} task(s) in its own queue")
        feeder = steps.get(step.pull_from_step_id)
        group_binds = group is not None and feeder is not None and feeder.group_id != step.group_id
        if feeder is None or not (step.wip_limit or group_binds):
            continue  # unlimited for this feeder: it does not pull
        if group_binds and group_full:
            continue
        person_applies = step.kind == StepKind.ACTIVE and feeder.kind != StepKind.ACTIVE
        candidates = [
            t
            for t in pullable.filter(step=feeder)
            if (not person_applies or has_room(t)) and lane_room(t, step, feeder)
        ]
        if candidates:
            problems.append(f"{room} has room and its feeder {feeder.name} has {len(candidates)} pullable task(s)")
    return problems


def unfinished_blockers():
    """The links whose blocker is unfinished: not archived, not in a done step."""
    return TaskLink.objects.filter(blocker__archived_at__isnull=True).exclude(blocker__step__kind=StepKind.DONE)


def blockers_drift(workspace_id) -> list[str]:
    """Tasks of the workspace whose `blocked_by` is not the ids of their unfinished blockers
    read from the links; [] when every one is right."""
    truth = {}
    for dependent_id, blocker_id in unfinished_blockers().values_list("dependent_id", "blocker_id"):
        truth.setdefault(dependent_id, []).append(str(blocker_id))
    tasks = Task.objects.filter(workflow__workspace_id=workspace_id).values_list("pk", "title", "blocked_by")
    return [
        f"{title}: blocked_by {kept}, blockers {sorted(truth.get(pk, []))}"
        for pk, title, kept in tasks
        if kept != sorted(truth.get(pk, []))
    ]


def pulled_while_blocked(workflow) -> list[str]:
    """Tasks the board's last change pulled although a blocker of theirs is unfinished after
    it (a blocker that change finished does not count); [] when none."""
    version = workflow.__class__.objects.get(pk=workflow.pk).version
    pulled = TaskEvent.objects.filter(workflow=workflow, kind=EventKind.PULLED, detail__version=version)
    blocked = unfinished_blockers().filter(dependent_id__in=pulled.values("task_id"))
    return [
        f"{title} was pulled while {blocker} is unfinished"
        for title, blocker in blocked.values_list("dependent__title", "blocker__title")
    ]
