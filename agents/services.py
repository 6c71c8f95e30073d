"""Agent sessions: the status machine, admission under the concurrency limits, promotion,
runner claims and leases. Every status change goes through `_set_status`.

Lock order: the board (workflow row, then its step rows, via
`board_change`) -> task rows -> session rows -> the workspace's session guard, always last.
The guard is the Workspace row taken `FOR NO KEY UPDATE`: it serializes session admissions
and promotions across the workspace's boards without blocking inserts that reference the
workspace. Within one board the workflow row lock already orders everything.
"""

import logging
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, Min, OuterRef, Q, Subquery
from django.utils import timezone
from rest_framework import status as http

from agents.models import HOLDING_SLOT, LIVE, TERMINAL, AgentSession, SessionStatus
from boards import step_events
from boards.admission import check_force
from boards.change import BoardChange
from boards.changes import board_change, task_change
from boards.locking import board_transaction
from boards.models import EventKind, Task
from common import metrics
from common.errors import Conflict, KandevError
from workflows.access import writable_workspaces
from workflows.models import OnSessionLimit, Workflow, WorkflowStep, Workspace

logger = logging.getLogger(__name__)

TRANSITIONS = {
    SessionStatus.QUEUED: {SessionStatus.STARTING, SessionStatus.CANCELLED},
    SessionStatus.STARTING: {SessionStatus.RUNNING, SessionStatus.FAILED, SessionStatus.CANCELLED},
    SessionStatus.RUNNING: {SessionStatus.COMPLETED, SessionStatus.FAILED, SessionStatus.CANCELLED},
}
EVENT_STATUS = {
    "boot_ready": SessionStatus.RUNNING,
    "turn_completed": SessionStatus.COMPLETED,
    "failed": SessionStatus.FAILED,
}
EVENT_TYPES = (*EVENT_STATUS, "heartbeat")


class IllegalSessionTransition(KandevError):
    status_code = http.HTTP_409_CONFLICT
    code = "illegal_session_transition"

    def __init__(self, session: AgentSession, to: str):
        super().__init__(f"A {session.status} session cannot become {to}.", status=session.status, requested=to)


class SessionLimitReached(KandevError):
    """A manual start refused by a concurrency limit of a `reject` workflow."""

    status_code = http.HTTP_409_CONFLICT
    code = "session_limit_reached"

    def __init__(self, block: "Block"):
        super().__init__(
            f"The {block.scope}'s limit of {block.limit} concurrent agent sessions is reached.",
            scope=block.scope,
            limit=block.limit,
            holding=block.holding,
        )


def _set_status(session: AgentSession, to: str, *, now, detail: str | None = None) -> None:
    """The status machine: queued -> starting -> running -> completed | failed | cancelled."""
    if to not in TRANSITIONS.get(session.status, ()):
        raise IllegalSessionTransition(session, to)
    session.status = to
    if to == SessionStatus.STARTING:
        session.started_at = now
    elif to == SessionStatus.RUNNING:
        session.lease_expires_at = now + lease()
    elif to in TERMINAL:
        session.finished_at = now
        session.lease_expires_at = None
    if detail is not None:
        session.detail = detail


def lease() -> timedelta:
    return timedelta(seconds=settings.KANDEV_SESSION_LEASE_SECONDS)


# --- concurrency -----------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    scope: str  # "workspace" or "workflow"
    limit: int
    holding: int


def _guard(workspace_id) -> Workspace:
    """The workspace's session guard: always the last lock a transaction takes."""
    return Workspace.objects.select_for_update(no_key=True).get(pk=workspace_id)


def _holding(**scope) -> int:
    return AgentSession.objects.filter(status__in=HOLDING_SLOT, **scope).count()


def _blocks(workspace: Workspace, workflow: Workflow) -> list[Block]:
    """Limits that are full, workspace first. Read under the guard."""
    blocks = []
    limit = workspace.session_limit
    if limit:
        holding = _holding(workflow__workspace_id=workspace.pk)
        if holding >= limit:
            blocks.append(Block("workspace", limit, holding))
    if workflow.max_parallel_sessions:
        holding = _holding(workflow_id=workflow.pk)
        if holding >= workflow.max_parallel_sessions:
            blocks.append(Block("workflow", workflow.max_parallel_sessions, holding))
    return blocks


def _free_slots(workspace: Workspace, workflow: Workflow) -> int | None:
    """How many more sessions of `workflow` may hold a slot; None when unlimited."""
    free = []
    limit = workspace.session_limit
    if limit:
        free.append(limit - _holding(workflow__workspace_id=workspace.pk))
    if workflow.max_parallel_sessions:
        free.append(workflow.max_parallel_sessions - _holding(workflow_id=workflow.pk))
    return max(min(free), 0) if free else None


def admit_session(
    change: BoardChange,
    *,
    task: Task,
    step: WorkflowStep,
    actor=None,
    force: bool = False,
    reason: str = "",
    manual: bool = False,
) -> AgentSession | None:
    """Start (or queue) an agent session for a locked `task` on a locked board.

    A task has at most one live session: an automatic start for a task that already has
    one does nothing. When a limit is full, a `queue` workflow queues the session; a
    `reject` workflow creates none and records why on the task's history (a manual start
    is refused with 409 instead, leaving nothing behind).
    """
    if AgentSession.objects.filter(task=task, status__in=LIVE).exists():
        if manual:
            raise Conflict("This task already has a live agent session.", code="session_already_live")
        return None
    workflow = change.workflow
    blocks = _blocks(_guard(workflow.workspace_id), workflow)
    session = AgentSession(
        task=task,
        workflow=workflow,
        step=step,
        actor=actor,
        forced=force,
        reason=reason,
        queued_at=change.now,
    )
    if not blocks or force:
        session.status = SessionStatus.STARTING
        session.started_at = change.now
    elif workflow.on_session_limit == OnSessionLimit.QUEUE:
        session.status = SessionStatus.QUEUED
    else:
        block = blocks[0]
        if manual:
            metrics.SESSIONS_REJECTED.labels(workflow=str(workflow.pk), scope=block.scope).inc()
            raise SessionLimitReached(block)
        transaction.on_commit(metrics.SESSIONS_REJECTED.labels(workflow=str(workflow.pk), scope=block.scope).inc)
        change.record.event(
            task,
            EventKind.SESSION,
            to_step=step,
            action="session_rejected",
            scope=block.scope,
            limit=block.limit,
            holding=block.holding,
        )
        return None
    session.save(force_insert=True)
    change.record.announce("session.updated", task=task)
    _slots_changed(change, task.pk)
    if force:
        change.record.event(
            task,
            EventKind.SESSION,
            to_step=step,
            reason=reason,
            action="session_forced",
            session_id=str(session.pk),
            bypassed=[b.scope for b in blocks],
        )
    return session


def promote(change: BoardChange) -> list[AgentSession]:
    """Start the oldest queued sessions of this board that now fit (inside its change)."""
    workflow = change.workflow
    queue = AgentSession.objects.filter(workflow=workflow, status=SessionStatus.QUEUED)
    if not queue.exists():
        return []
    _drop_stale(change, queue)
    # No limit can have more free slots than its size: lock at most that many.
    bounds = [n for n in (workflow.max_parallel_sessions, _limit_of(workflow.workspace_id)) if n]
    locked = queue.order_by("queued_at", "id").select_for_update(skip_locked=True)
    candidates = list(locked[: min(bounds)] if bounds else locked)
    if not candidates:
        return []
    free = _free_slots(_guard(workflow.workspace_id), workflow)
    promoted = candidates if free is None else candidates[:free]
    for session in promoted:
        _set_status(session, SessionStatus.STARTING, now=change.now)
        waited = (change.now - session.queued_at).total_seconds()
        transaction.on_commit(partial(metrics.SESSION_QUEUE_WAIT.labels(workflow=str(workflow.pk)).observe, waited))
    AgentSession.objects.bulk_update(promoted, ["status", "started_at"])
    if promoted:
        change.record.announce("session.updated")
        _slots_changed(change, *(session.task_id for session in promoted))
    return promoted


def _drop_stale(change: BoardChange, queue) -> None:
    """A queued session whose task has since left its step (moved or pulled on) would start
    an agent for a step the task is no longer in: cancel it instead."""
    stale = list(queue.exclude(task__step_id=F("step_id")).select_for_update(skip_locked=True, of=("self",)))
    for session in stale:
        _set_status(
            session,
            SessionStatus.CANCELLED,
            now=change.now,
            detail="Cancelled: the task left the step before a slot opened.",
        )
    AgentSession.objects.bulk_update(stale, ["status", "finished_at", "lease_expires_at", "detail"])
    if stale:
        change.record.announce("session.updated")
        _slots_changed(change, *(session.task_id for session in stale))


def _limit_of(workspace_id) -> int:
    return Workspace.objects.only("max_concurrent_sessions").get(pk=workspace_id).session_limit


def _agent_stopped(change: BoardChange, task: Task | None) -> None:
    """No agent works on `task` any more: a pull may take it again."""
    if task is not None and task.step_id in change.steps:
        change.worklist.arrived(change.steps[task.step_id])


def _slot_freed(change: BoardChange) -> None:
    """A session of this board left starting/running: promote here now, elsewhere after commit
    (`_slots_changed`).

    The guard is taken even when nothing here was queued: an admission elsewhere in the
    workspace that counted this session as holding then commits its queued session before
    this ending commits, so the after-commit promotion sees it and no slot is stranded.
    """
    promote(change)
    _guard(change.workflow.workspace_id)


def _slots_changed(change: BoardChange, *task_ids) -> None:
    """Sessions holding or waiting for a slot changed (those of `task_ids`): this board's
    message carries the tasks and the agent figures; after commit, once per change, the
    workspace's other boards promote what now fits and show its new figures."""
    for task_id in task_ids:
        if task_id is not None:  # a deleted task's session
            change.record.session_changed(task_id)
    if change.record.agents:
        return
    change.record.agents_changed()
    workspace_id, workflow_id = change.workflow.workspace_id, change.workflow.pk

    # Named, not a partial: a robust on_commit logs a failure by the callback's __qualname__.
    def refresh_other_boards():
        refresh_workspace(workspace_id=workspace_id, exclude=workflow_id)

    transaction.on_commit(refresh_other_boards, robust=True)


def refresh_workspace(*, workspace_id, exclude=None) -> int:
    """A workspace's sessions or its limit changed: each of its boards (but `exclude`), in its
    own transaction, promotes what now fits and shows the workspace's new agent figures; the
    boards with the oldest queued session first. Returns the sessions promoted."""
    queue = AgentSession.objects.filter(workflow=OuterRef("pk"), status=SessionStatus.QUEUED)
    workflow_ids = (
        Workflow.objects.filter(workspace_id=workspace_id)
        .exclude(pk=exclude)
        .annotate(oldest=Subquery(queue.order_by("queued_at").values("queued_at")[:1]))
        .order_by(F("oldest").asc(nulls_last=True), "created_at", "id")
        .values_list("id", flat=True)
    )
    return _each_board(refresh_board, workflow_ids)


@board_transaction
def refresh_board(*, workflow_id) -> int:
    with board_change(workflow_id) as change:
        promoted = promote(change)  # first: a promotion here tells the other boards in turn
        change.record.announce("session.updated")
        change.record.agents_changed()
        return len(promoted)


@board_transaction
def promote_board(*, workflow_id) -> int:
    with board_change(workflow_id) as change:
        return len(promote(change))


# --- services: each is one outermost transaction ----------------------------------------


@board_transaction
def session_start(*, task: Task, actor, force: bool = False, reason: str = "") -> AgentSession:
    """Start a session by hand (API, `manage.py start_session`). `actor=None` is an operator."""
    check_force(workflow=task.workflow, actor=actor, force=force, reason=reason)
    with task_change(task, actor=actor) as (change, task):
        if task.archived_at is not None or task.is_ephemeral:
            raise Conflict("Only a live task can run an agent session.", code="task_not_live")
        return admit_session(
            change,
            task=task,
            step=change.steps[task.step_id],
            actor=actor,
            force=force,
            reason=reason,
            manual=True,
        )


def _lock_session(session_id) -> tuple[AgentSession, Task | None]:
    """Lock a session's task, then the session (the lock order)."""
    task_id = AgentSession.objects.filter(pk=session_id).values_list("task_id", flat=True).first()
    task = Task.objects.select_for_update().filter(pk=task_id).first() if task_id else None
    session = AgentSession.objects.select_for_update().get(pk=session_id)
    return session, task


@board_transaction
def session_event(*, session: AgentSession, type: str, detail: str = "", actor=None) -> AgentSession:
    """A runner's report: boot_ready, turn_completed or failed. A repeated report is a no-op,
    so `on_turn_complete` runs exactly once however often the turn is reported."""
    to = EVENT_STATUS[type]
    with board_change(session.workflow_id, actor=actor) as change:
        session, task = _lock_session(session.pk)
        if session.status == to:
            return session
        _set_status(session, to, now=change.now, detail=detail if type != "boot_ready" else None)
        session.save()
        change.record.announce("session.updated", **({"task": task} if task is not None else {}))
        if to in TERMINAL:  # from starting or running: the session held a slot
            _slots_changed(change, session.task_id)
            _slot_freed(change)
            _agent_stopped(change, task)
        else:  # still holding its slot: only the card changes
            change.record.session_changed(session.task_id)
        # boot_ready never advances the workflow; a completed turn runs the step's actions
        # only while the task is still in the step the session was for.
        if to == SessionStatus.COMPLETED and task is not None and task.archived_at is None:
            if task.step_id == session.step_id:
                step_events.turn_completed(change, task, change.steps[task.step_id])
        return session


@board_transaction
def session_cancel(*, session: AgentSession, actor, reason: str = "") -> AgentSession:
    with board_change(session.workflow_id, actor=actor) as change:
        session, task = _lock_session(session.pk)
        if session.status == SessionStatus.CANCELLED:
            return session
        held = session.status in HOLDING_SLOT
        _set_status(session, SessionStatus.CANCELLED, now=change.now, detail=reason or "Cancelled.")
        session.save()
        change.record.announce("session.updated", **({"task": task} if task is not None else {}))
        _slots_changed(change, session.task_id)
        if held:
            _slot_freed(change)
            _agent_stopped(change, task)
        return session


def end_task_sessions(change: BoardChange, task: Task, *, detail: str) -> None:
    """Cancel the live sessions of a task leaving the board (archive, delete)."""
    sessions = list(AgentSession.objects.filter(task=task, status__in=LIVE).select_for_update())
    if not sessions:
        return
    held = any(s.status in HOLDING_SLOT for s in sessions)
    for session in sessions:
        _set_status(session, SessionStatus.CANCELLED, now=change.now, detail=detail)
    AgentSession.objects.bulk_update(sessions, ["status", "finished_at", "lease_expires_at", "detail"])
    _slots_changed(change, task.pk)
    if held:
        _slot_freed(change)


@transaction.atomic
def session_heartbeat(*, session: AgentSession) -> AgentSession:
    """Extend the runner's lease. Only the session row is locked: nothing else is touched."""
    session = AgentSession.objects.select_for_update().get(pk=session.pk)
    if session.status not in HOLDING_SLOT:
        raise IllegalSessionTransition(session, "heartbeat")
    session.lease_expires_at = timezone.now() + lease()
    session.save(update_fields=["lease_expires_at"])
    return session


@transaction.atomic
def session_claim(*, user, runner: str, workspace_id=None) -> AgentSession | None:
    """Give a runner the oldest unclaimed starting session it may run; rows another runner
    is claiming are skipped, so no two runners get the same session."""
    workspaces = writable_workspaces(user)
    _runner_seen(workspaces, workspace_id)
    candidates = AgentSession.objects.filter(
        status=SessionStatus.STARTING, runner="", workflow__workspace_id__in=workspaces
    )
    if workspace_id is not None:
        candidates = candidates.filter(workflow__workspace_id=workspace_id)
    session = candidates.order_by("started_at", "id").select_for_update(skip_locked=True, of=("self",)).first()
    if session is None:
        return None
    session.runner = runner[:200]
    session.lease_expires_at = timezone.now() + lease()
    session.save(update_fields=["runner", "lease_expires_at"])
    workflow_id, task_id = session.workflow_id, session.task_id

    # Named, not a partial: a robust on_commit logs a failure by the callback's __qualname__.
    def show_claimed():
        claimed_board(workflow_id=workflow_id, task_id=task_id)

    transaction.on_commit(show_claimed, robust=True)
    return session


@board_transaction
def claimed_board(*, workflow_id, task_id) -> None:
    """A runner claimed a session of this board: its card and the agent figures (no longer
    waiting for a runner) reach the viewers, as every other session change does."""
    with board_change(workflow_id) as change:
        change.record.announce("session.updated")
        _slots_changed(change, task_id)


RUNNER_SEEN_EVERY = timedelta(seconds=15)


def _runner_seen(workspaces, workspace_id=None) -> None:
    """Note that a runner asked for work in `workspaces` (only `workspace_id` of them, for a
    runner whose token is scoped to it): one UPDATE, and none while the last note is fresh
    (a runner polls every few seconds)."""
    now = timezone.now()
    seen = Workspace.objects.filter(pk__in=workspaces)
    if workspace_id is not None:
        seen = seen.filter(pk=workspace_id)
    seen.exclude(runner_seen_at__gt=now - RUNNER_SEEN_EVERY).update(runner_seen_at=now)


# --- recovery (the background worker) ---------------------------------------------------


NO_RUNNER = "No runner claimed it within {seconds} seconds."


def _unclaimed_since(now):
    """Starting sessions no runner claimed before the claim timeout ran out (none when it is 0)."""
    timeout = settings.KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS
    if not timeout:
        return Q(pk__in=[])
    return Q(status=SessionStatus.STARTING, runner="", started_at__lt=now - timedelta(seconds=timeout))


def _abandoned(now):
    """Sessions to fail: their runner's lease expired, or no runner ever claimed them."""
    return Q(status__in=HOLDING_SLOT, lease_expires_at__lt=now) | _unclaimed_since(now)


@board_transaction
def expire_board_leases(*, workflow_id, now=None) -> int:
    """Fail this board's abandoned sessions (`now`, when given, is the time they are judged
    at) and free their slots."""
    with board_change(workflow_id) as change:
        now = now or change.now
        expired = list(
            AgentSession.objects.filter(_abandoned(now), workflow=change.workflow).select_for_update(skip_locked=True)
        )
        for session in expired:
            if session.runner:
                detail = "The runner's lease expired (no heartbeat)."
            else:
                detail = NO_RUNNER.format(seconds=settings.KANDEV_RUNNER_CLAIM_TIMEOUT_SECONDS)
            _set_status(session, SessionStatus.FAILED, now=change.now, detail=detail)
        AgentSession.objects.bulk_update(expired, ["status", "finished_at", "lease_expires_at", "detail"])
        if expired:
            change.record.announce("session.updated")
            _slots_changed(change, *(session.task_id for session in expired))
            _slot_freed(change)
            for task in Task.objects.filter(pk__in=[s.task_id for s in expired]).only("id", "step_id"):
                _agent_stopped(change, task)
        return len(expired)


def reconcile_sessions(now=None) -> tuple[int, int]:
    """Fail sessions whose lease expired or that no runner claimed in time, then promote
    queued sessions that fit, board by board (oldest queue first). Returns (failed,
    promoted). `now` judges the sessions at another time (tests)."""
    now = now or timezone.now()
    boards = AgentSession.objects.filter(_abandoned(now)).values_list("workflow_id", flat=True).distinct()
    failed = _each_board(partial(expire_board_leases, now=now), boards)
    queued = (
        AgentSession.objects.filter(status=SessionStatus.QUEUED)
        .values("workflow_id")
        .annotate(oldest=Min("queued_at"))
        .order_by("oldest")
        .values_list("workflow_id", flat=True)
    )
    promoted = _each_board(promote_board, queued)
    return failed, promoted


def _each_board(service, workflow_ids) -> int:
    done = 0
    for workflow_id in list(workflow_ids):
        try:
            done += service(workflow_id=workflow_id)
        except Exception:  # one broken board must not stop the others
            logger.exception("%s failed for board %s", getattr(service, "func", service).__name__, workflow_id)
    return done
