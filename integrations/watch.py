"""Review watches: GitHub pull requests awaiting a reviewer become tasks through admission.

Each poll, per repository: open pull requests without a live task are offered to the
target step oldest first; a capacity refusal (`WipLimitReached`) is deferred work: nothing
persists and the next poll offers it again. Live tasks whose pull request is closed or
merged are archived, which frees capacity and pulls. `poll_due_watches()` is what the
background worker calls each tick.
"""

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from boards import admission
from boards.models import Task
from common.errors import Conflict, Invalid, KandevError, WipLimitReached
from common.validation import whole_number
from integrations import credentials
from integrations.github import GitHub, PullRequest, external_ref
from integrations.models import GITHUB_API, DisabledReason, ReviewWatch
from workflows.models import Workflow, WorkflowStep

logger = logging.getLogger(__name__)

MAX_BACKOFF = timedelta(hours=1)


@dataclass
class PollReport:
    watch_id: str
    admitted: list[str] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)
    archived: list[str] = field(default_factory=list)
    error: str = ""


def watch_create(
    *,
    workflow: Workflow,
    step: WorkflowStep | None,
    actor,
    repositories: list[str],
    reviewer_login: str,
    token: str = "",
    poll_interval_seconds: int = 300,
    enabled: bool = True,
    api_base_url: str = GITHUB_API,
) -> ReviewWatch:
    watch = ReviewWatch(
        workflow=workflow,
        step=step,
        repositories=list(dict.fromkeys(repositories)),
        reviewer_login=reviewer_login,
        poll_interval_seconds=poll_interval_seconds,
        enabled=enabled,
        api_base_url=api_base_url.rstrip("/"),
        created_by=actor,
    )
    watch.set_token(token)
    watch.save(force_insert=True)
    return watch


# Where the stored token is sent: changing either must come with the token itself.
DESTINATION_FIELDS = ("api_base_url", "repositories")


def watch_update(*, watch: ReviewWatch, actor, **fields) -> ReviewWatch:
    if "repositories" in fields:
        fields["repositories"] = list(dict.fromkeys(fields["repositories"]))
    if "api_base_url" in fields:
        fields["api_base_url"] = fields["api_base_url"].rstrip("/")
    redirected = [f for f in DESTINATION_FIELDS if f in fields and fields[f] != getattr(watch, f)]
    if redirected:
        # Otherwise any member could send the creator's token to an address of their own.
        credentials.require_keeper(actor, watch, to="change where the watch's token is sent")
        if "token" not in fields:
            raise Invalid({"token": [f"Supply the token again to change {' and '.join(redirected)}."]})
    if "token" in fields:
        watch.set_token(fields.pop("token"))
        fields["token_encrypted"] = watch.token_encrypted
    for name, value in fields.items():
        setattr(watch, name, value)
    # A changed configuration deserves a fresh try rather than an old back-off.
    watch.backoff_until, watch.consecutive_failures = None, 0
    watch.save(update_fields=[*fields, "backoff_until", "consecutive_failures"])
    return watch


@transaction.atomic
def watch_take_over(*, watch: ReviewWatch, actor, token: str) -> ReviewWatch:
    """An owner makes the watch theirs and lets it poll again, with their own token: the former
    creator's is dropped, since a token goes only where its owner sent it."""
    watch = ReviewWatch.objects.select_for_update(of=("self",)).get(pk=watch.pk)
    changed = credentials.taken_over(watch, actor=actor)
    watch.set_token(token)
    watch.backoff_until, watch.consecutive_failures, watch.last_error = None, 0, ""
    watch.save(update_fields=[*changed, "token_encrypted", "backoff_until", "consecutive_failures", "last_error"])
    return watch


def _offer(watch: ReviewWatch, pulls: list[PullRequest], report: PollReport) -> None:
    known = set(
        Task.objects.filter(
            workflow_id=watch.workflow_id,
            archived_at__isnull=True,
            external_ref__in=[p.external_ref for p in pulls],
        ).values_list("external_ref", flat=True)
    )
    fresh = [p for p in pulls if p.external_ref not in known]
    for index, pull in enumerate(fresh):
        try:
            admission.task_create(
                workflow=watch.workflow,
                step=watch.step,
                actor=None,
                title=pull.title[:500] or f"{pull.repository}#{pull.number}",
                description=(
                    f"Review requested from @{watch.reviewer_login} on {pull.repository}#{pull.number}.\n\n{pull.url}"
                ),
                external_ref=pull.external_ref,
            )
        except WipLimitReached:
            # The step is full: the rest waits for the next poll, with nothing kept.
            report.deferred.extend(p.external_ref for p in fresh[index:])
            return
        except Conflict as exc:
            if exc.code != "external_ref_exists":
                raise
            continue  # a concurrent poll admitted it first
        report.admitted.append(pull.external_ref)


def _archive_closed(watch: ReviewWatch, repository: str, open_refs: set, github: GitHub, report: PollReport) -> None:
    prefix = external_ref(repository, 0)[:-1]
    candidates = (
        Task.objects.filter(workflow_id=watch.workflow_id, archived_at__isnull=True, external_ref__startswith=prefix)
        .exclude(external_ref__in=open_refs)
        .order_by("created_at", "id")
    )
    for task in candidates:
        number = whole_number(task.external_ref[len(prefix) :])
        if number is None or not github.is_closed(repository=repository, number=number):
            continue  # still open (its review was given or the request withdrawn): keep the card
        admission.task_archive(task=task, actor=None)
        report.archived.append(task.external_ref)


def _backoff(watch: ReviewWatch, error: KandevError, now: datetime) -> datetime:
    retry_at = getattr(error, "retry_at", None)
    if retry_at is not None:
        return retry_at
    delay = timedelta(seconds=watch.poll_interval_seconds) * 2 ** min(watch.consecutive_failures, 10)
    return now + min(delay, MAX_BACKOFF)


def _field_messages(error: KandevError) -> list[str]:
    return [m for messages in error.extra.get("errors", {}).values() for m in messages]


def poll_watch(*, watch: ReviewWatch, now: datetime | None = None) -> PollReport:
    """One poll of one watch. Safe to run concurrently: admission decides every task."""
    now = now or timezone.now()
    report = PollReport(watch_id=str(watch.pk))
    watch = ReviewWatch.objects.select_related("workflow", "step", "created_by").get(pk=watch.pk)
    reason = credentials.lapsed(watch)
    if reason:  # its creator's token goes nowhere once their authority ended
        report.error = f"disabled: {DisabledReason(reason).label}"
        return report
    outcome = {
        "last_polled_at": now,
        "backoff_until": None,
        "consecutive_failures": 0,
        "last_error": "",
    }
    try:
        with GitHub(base_url=watch.api_base_url, token=watch.token(), now=now) as github:
            for repository in watch.repositories:
                pulls = github.open_review_requests(repository=repository, login=watch.reviewer_login)
                # Archive first: a closed pull request's slot is then free for a waiting one.
                _archive_closed(watch, repository, {p.external_ref for p in pulls}, github, report)
                _offer(watch, pulls, report)
    except KandevError as error:  # GitHub, an unreadable token, a board without steps
        report.error = " ".join([error.detail, *_field_messages(error)])
        logger.warning("review watch %s: %s", watch.pk, report.error)
        outcome.update(
            backoff_until=_backoff(watch, error, now),
            consecutive_failures=watch.consecutive_failures + 1,
            last_error=report.error,
        )
    ReviewWatch.objects.filter(pk=watch.pk).update(**outcome)
    return report


def claim_due_watches(*, now: datetime, ignore_interval: bool = False) -> list[ReviewWatch]:
    """Due watches, marked as polled now so that concurrent workers do not poll them twice."""
    with transaction.atomic():
        candidates = (
            ReviewWatch.objects.select_for_update(skip_locked=True)
            .filter(enabled=True, disabled_at__isnull=True)
            .filter(Q(backoff_until__isnull=True) | Q(backoff_until__lte=now))
            .order_by("pk")
        )
        due = [
            w
            for w in candidates
            if ignore_interval
            or w.last_polled_at is None
            or w.last_polled_at + timedelta(seconds=w.poll_interval_seconds) <= now
        ]
        ReviewWatch.objects.filter(pk__in=[w.pk for w in due]).update(last_polled_at=now)
    return due


def poll_due_watches(*, now: datetime | None = None, ignore_interval: bool = False) -> list[PollReport]:
    """Poll every enabled watch whose interval has passed and that is not backing off (or
    disabled: its creator's authority ended)."""
    now = now or timezone.now()
    reports = []
    for watch in claim_due_watches(now=now, ignore_interval=ignore_interval):
        try:
            reports.append(poll_watch(watch=watch, now=now))
        except Exception:
            # One broken watch must not stop the worker's tick for the others.
            logger.exception("review watch %s failed", watch.pk)
            reports.append(PollReport(watch_id=str(watch.pk), error="internal error (see the logs)"))
    return reports
