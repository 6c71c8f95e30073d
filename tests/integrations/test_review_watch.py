"""GitHub review watch: polling a local fake GitHub with the real httpx client."""

from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from boards import admission
from boards.models import Task, TaskEvent
from boards.signals import task_admitted
from integrations.models import ReviewWatch
from integrations.watch import poll_due_watches, poll_watch, watch_create
from tests.concurrency import race_ok
from tests.conftest import board_state, member_client
from tests.factories import MembershipFactory, StepFactory, UserFactory, WorkflowFactory
from tests.integrations.fake_github import FakeGitHub, Scripted
from workflows.models import Role, Workflow

REPO = "acme/api"


@pytest.fixture
def github():
    with FakeGitHub() as fake:
        yield fake


def make_watch(github, step, **kwargs):
    return watch_create(
        workflow=step.workflow,
        step=step,
        actor=None,
        repositories=kwargs.pop("repositories", [REPO]),
        reviewer_login="rita",
        token=github.token,
        api_base_url=github.base_url,
        **kwargs,
    )


def refs(step):
    return sorted(Task.objects.filter(step=step, archived_at__isnull=True).values_list("external_ref", flat=True))


class TestPolling:
    def test_open_pull_requests_awaiting_the_reviewer_become_tasks(self, github, board):
        _, _, done = board
        github.open_pull(REPO, 1, "Fix login")
        github.open_pull(REPO, 2, "Add search")
        github.open_pull(REPO, 3, "Someone else's review", reviewer="sam")
        github.open_pull("acme/other", 4, "Another repository")
        report = poll_watch(watch=make_watch(github, done))
        assert report.admitted == ["github:acme/api#1", "github:acme/api#2"]
        task = Task.objects.get(external_ref="github:acme/api#1")
        assert (task.step, task.title) == (done, "Fix login")
        assert "https://github.com/acme/api/pull/1" in task.description
        search = github.searches()[0]
        assert search.query["q"] == ["is:pr is:open review-requested:rita repo:acme/api"]
        assert {r.authorization for r in github.requests} == {"Bearer ghp-test-token"}

    def test_a_null_step_means_the_start_step_and_known_pulls_are_not_duplicated(self, github, board):
        backlog, doing, _ = board
        github.open_pull(REPO, 1)
        watch = make_watch(github, backlog)
        ReviewWatch.objects.filter(pk=watch.pk).update(step=None)
        poll_watch(watch=watch)
        before = board_state(backlog.workflow)
        assert poll_watch(watch=watch).admitted == []
        created = TaskEvent.objects.get(kind="created")
        assert created.to_step_id == backlog.pk  # then In Progress, which had room, pulled it
        assert refs(doing) == ["github:acme/api#1"]
        assert board_state(backlog.workflow) == before

    def test_follows_pagination_across_every_page(self, board):
        _, _, done = board
        with FakeGitHub(page_size=3) as github:
            for number in range(1, 8):
                github.open_pull(REPO, number)
            poll_watch(watch=make_watch(github, done))
            pages = [r.query.get("page", ["1"])[0] for r in github.searches()]
        assert pages == ["1", "2", "3"]
        assert len(refs(done)) == 7

    def test_a_link_to_another_host_is_not_followed_with_the_token(self, github, board):
        _, _, done = board
        github.open_pull(REPO, 1)
        github.script.append(
            Scripted(
                200,
                {"Link": '<http://example.invalid/search/issues?page=2>; rel="next"'},
                {"items": []},
            )
        )
        report = poll_watch(watch=make_watch(github, done))
        assert "Refusing to follow" in report.error
        assert len(github.requests) == 1

    def test_a_wrong_token_is_reported_and_backs_off(self, github, board):
        _, _, done = board
        github.open_pull(REPO, 1)
        watch = make_watch(github, done)
        watch.set_token("wrong")
        watch.save()
        now = timezone.now()
        report = poll_watch(watch=watch, now=now)
        watch.refresh_from_db()
        assert report.error == watch.last_error == "GitHub answered 401 (the token was refused)."
        assert watch.backoff_until == now + timedelta(seconds=watch.poll_interval_seconds)
        assert not Task.objects.exists()


class TestCapacity:
    """The reference scenario: eight new pull requests, an empty limit-2 step."""

    def test_only_pull_requests_that_obtain_capacity_become_tasks_the_rest_wait(self, github, board, owner):
        _, doing, done = board
        for number in range(1, 9):
            github.open_pull(REPO, number)
        watch = make_watch(github, doing)
        # The step-event engine (auto_start_agent) listens to task_admitted: only the two
        # admitted pull requests may reach it.
        entered = []

        def on_admitted(sender, *, task, step, **kwargs):
            entered.append((task.external_ref, step.pk))

        task_admitted.connect(on_admitted)
        try:
            report = poll_watch(watch=watch)
        finally:
            task_admitted.disconnect(on_admitted)
        assert entered == [("github:acme/api#1", doing.pk), ("github:acme/api#2", doing.pk)]
        assert report.admitted == ["github:acme/api#1", "github:acme/api#2"]
        assert report.deferred == [f"github:acme/api#{n}" for n in range(3, 9)]
        # Nothing of a deferred pull request persisted: two creations, two versions.
        assert board_state(doing.workflow) == (2, 2, 2)

        # A poll with no capacity leaves the board exactly as it was.
        assert poll_watch(watch=watch).admitted == []
        assert board_state(doing.workflow) == (2, 2, 2)

        # One review task leaves the limited step; the next poll admits one deferred PR.
        admission.task_move(task=Task.objects.get(external_ref="github:acme/api#1"), to_step=done, actor=owner)
        assert poll_watch(watch=watch).admitted == ["github:acme/api#3"]
        assert refs(doing) == ["github:acme/api#2", "github:acme/api#3"]

    def test_a_merged_or_closed_pull_request_archives_its_task_and_frees_its_slot(self, github, board):
        _, doing, _ = board
        for number in (1, 2, 3, 4):
            github.open_pull(REPO, number)
        watch = make_watch(github, doing)
        poll_watch(watch=watch)
        github.close_pull(REPO, 1, merged=True)
        github.close_pull(REPO, 2)
        report = poll_watch(watch=watch)
        assert report.archived == ["github:acme/api#1", "github:acme/api#2"]
        assert report.admitted == ["github:acme/api#3", "github:acme/api#4"]
        assert refs(doing) == ["github:acme/api#3", "github:acme/api#4"]
        archived = Task.objects.filter(archived_at__isnull=False)
        assert sorted(archived.values_list("external_ref", flat=True)) == [
            "github:acme/api#1",
            "github:acme/api#2",
        ]

    def test_a_pull_request_no_longer_awaiting_review_but_open_keeps_its_task(self, github, board):
        _, doing, _ = board
        github.open_pull(REPO, 1)
        watch = make_watch(github, doing)
        poll_watch(watch=watch)
        github.pulls[(REPO, 1)].reviewers.clear()  # the review was given; the PR is still open
        report = poll_watch(watch=watch)
        assert report.archived == []
        assert refs(doing) == ["github:acme/api#1"]

    def test_archiving_frees_capacity_that_the_step_pulls_from_its_feeder(self, github, board, make_task):
        backlog, doing, _ = board
        github.open_pull(REPO, 1)
        github.open_pull(REPO, 2)
        watch = make_watch(github, doing)
        poll_watch(watch=watch)
        make_task(backlog, "waiting in backlog")
        github.close_pull(REPO, 1, merged=True)
        poll_watch(watch=watch)
        assert Task.objects.get(title="waiting in backlog").step == doing


@pytest.mark.django_db(transaction=True)
def test_concurrent_polls_of_eight_pull_requests_admit_exactly_two(github):
    owner = UserFactory(username="olivia")
    for number in range(1, 9):
        github.open_pull(REPO, number)
    for _ in range(5):
        workflow = WorkflowFactory()
        MembershipFactory(workspace=workflow.workspace, user=owner, role=Role.OWNER)
        review = StepFactory(workflow=workflow, name="Review", position=0, is_start_step=True, wip_limit=2)
        watch = make_watch(github, review)
        reports = race_ok(6, lambda i, watch=watch: poll_watch(watch=watch))
        assert len(reports) == 6 and not any(r.error for r in reports)
        assert sum(len(r.admitted) for r in reports) == 2
        assert len(refs(review)) == 2
        assert TaskEvent.objects.filter(workflow=workflow).count() == 2
        assert Workflow.objects.get(pk=workflow.pk).version == 2


@pytest.mark.django_db(transaction=True)
def test_concurrent_workers_poll_a_due_watch_once(github, board):
    _, doing, _ = board
    github.open_pull(REPO, 1)
    make_watch(github, doing)
    reports = [report for tick in race_ok(4, lambda i: poll_due_watches()) for report in tick]
    assert len(reports) == 1
    assert len(github.searches()) == 1
    assert refs(doing) == ["github:acme/api#1"]


class TestSchedule:
    def test_due_watches_follow_their_interval_and_disabled_ones_never_poll(self, github, board):
        _, doing, done = board
        github.open_pull(REPO, 1)
        make_watch(github, doing, poll_interval_seconds=300)
        make_watch(github, done, enabled=False)
        start = timezone.now()
        assert len(poll_due_watches(now=start)) == 1
        assert poll_due_watches(now=start + timedelta(seconds=299)) == []
        assert len(poll_due_watches(now=start + timedelta(seconds=300))) == 1
        assert len(github.searches()) == 2

    def test_the_once_command_polls_every_enabled_watch(self, github, board):
        _, doing, _ = board
        github.open_pull(REPO, 1)
        make_watch(github, doing)
        poll_due_watches()
        out = StringIO()
        call_command("poll_watches", "--once", stdout=out)  # ignores the interval
        assert len(github.searches()) == 2
        assert "0 admitted, 0 deferred, 0 archived" in out.getvalue()


class TestRateLimits:
    def test_a_403_with_the_limit_exhausted_waits_for_the_reset(self, github, board):
        _, doing, _ = board
        github.open_pull(REPO, 1)
        watch = make_watch(github, doing)
        reset = datetime(2030, 1, 1, tzinfo=UTC)
        github.script.append(
            Scripted(
                403,
                {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(reset.timestamp()))},
            )
        )
        now = datetime(2029, 12, 31, 23, 0, tzinfo=UTC)
        assert "rate limit" in poll_due_watches(now=now)[0].error
        watch.refresh_from_db()
        assert watch.backoff_until == reset
        assert poll_due_watches(now=reset - timedelta(seconds=1)) == []
        assert len(github.requests) == 1  # nothing was sent while backing off
        assert poll_due_watches(now=reset)[0].admitted == ["github:acme/api#1"]
        watch.refresh_from_db()
        assert (watch.backoff_until, watch.consecutive_failures, watch.last_error) == (None, 0, "")

    def test_an_exhausted_limit_stops_before_the_next_page(self, board):
        _, _, done = board
        with FakeGitHub(page_size=2) as github:
            for number in range(1, 6):
                github.open_pull(REPO, number)
            github.rate_remaining = 1  # the first page uses the last request
            watch = make_watch(github, done)
            report = poll_watch(watch=watch, now=datetime(2029, 1, 1, tzinfo=UTC))
            assert len(github.requests) == 1
        assert "rate limit" in report.error
        watch.refresh_from_db()
        assert watch.backoff_until == datetime.fromtimestamp(github.rate_reset, tz=UTC)
        assert not Task.objects.exists()  # an incomplete repository is left for the next poll

    def test_429_with_retry_after_backs_off_that_long(self, github, board):
        _, doing, _ = board
        watch = make_watch(github, doing)
        github.script.append(Scripted(429, {"Retry-After": "120"}))
        now = timezone.now()
        poll_watch(watch=watch, now=now)
        watch.refresh_from_db()
        assert watch.backoff_until == now + timedelta(seconds=120)

    def test_server_errors_back_off_exponentially_until_a_success(self, github, board):
        _, doing, _ = board
        github.open_pull(REPO, 1)
        watch = make_watch(github, doing, poll_interval_seconds=60)
        github.script += [Scripted(502), Scripted(503), Scripted(500)]
        now = timezone.now()
        waits = []
        for _ in range(3):
            report = poll_due_watches(now=now)[0]
            assert "GitHub answered 5" in report.error
            watch.refresh_from_db()
            waits.append((watch.backoff_until - now).total_seconds())
            now = watch.backoff_until
        assert waits == [60, 120, 240]
        assert not Task.objects.exists()
        assert poll_due_watches(now=now)[0].admitted == ["github:acme/api#1"]
        watch.refresh_from_db()
        assert watch.consecutive_failures == 0


class TestApi:
    def payload(self, step, **extra):
        return {
            "workflow_id": str(step.workflow_id),
            "step_id": str(step.pk),
            "repositories": ["acme/api", "acme/web"],
            "reviewer_login": "rita",
            "token": "ghp-secret",
            **extra,
        }

    def test_the_token_is_write_only_and_stored_encrypted(self, api, board):
        _, doing, _ = board
        created = api.post("/api/v1/review-watches/", self.payload(doing), format="json")
        assert created.status_code == 201
        body = created.json()
        assert "token" not in body and body["has_token"] is True
        assert body["api_base_url"] == "https://api.github.com"
        assert (body["poll_interval_seconds"], body["enabled"]) == (300, True)
        watch = ReviewWatch.objects.get(pk=body["id"])
        assert "ghp-secret" not in watch.token_encrypted and watch.token() == "ghp-secret"
        patched = api.patch(
            f"/api/v1/review-watches/{body['id']}/",
            {
                "token": "ghp-rotated",
                "api_base_url": "https://ghe.example.com/api/v3/",
                "enabled": False,
            },
            format="json",
        )
        assert patched.status_code == 200
        assert "token" not in patched.json() and "ghp" not in str(patched.json())
        watch.refresh_from_db()
        assert (watch.token(), watch.api_base_url, watch.enabled) == (
            "ghp-rotated",
            "https://ghe.example.com/api/v3",
            False,
        )
        listed = api.get("/api/v1/review-watches/", {"workflow": str(doing.workflow_id)}).json()
        assert listed["count"] == 1 and "ghp" not in str(listed)

    def test_validation_errors_are_field_errors(self, api, board):
        _, doing, _ = board
        other = StepFactory()
        bad = self.payload(doing, repositories=["not a repo"], poll_interval_seconds=1, api_base_url="ftp://x")
        response = api.post("/api/v1/review-watches/", bad, format="json")
        assert response.status_code == 400
        assert set(response.json()["errors"]) == {
            "repositories",
            "poll_interval_seconds",
            "api_base_url",
        }
        wrong_step = api.post("/api/v1/review-watches/", self.payload(doing, step_id=str(other.pk)), format="json")
        assert wrong_step.json()["errors"] == {"step_id": ["No such step in this workflow."]}
        assert not ReviewWatch.objects.exists()

    def test_viewers_read_members_write_strangers_see_nothing(self, api, board):
        _, doing, _ = board
        watch_id = api.post("/api/v1/review-watches/", self.payload(doing), format="json").json()["id"]
        viewer = member_client(doing.workflow.workspace, Role.VIEWER)
        member = member_client(doing.workflow.workspace, Role.MEMBER)
        stranger = member_client(StepFactory().workflow.workspace, Role.OWNER)
        url = f"/api/v1/review-watches/{watch_id}/"
        assert viewer.get(url).status_code == 200
        assert viewer.patch(url, {"enabled": False}, format="json").status_code == 403
        assert viewer.post("/api/v1/review-watches/", self.payload(doing), format="json").status_code == 403
        assert stranger.get(url).status_code == 404
        assert stranger.patch(url, {"enabled": False}, format="json").status_code == 404
        assert member.patch(url, {"step_id": None}, format="json").json()["step_id"] is None
        assert member.delete(url).status_code == 204
        assert not ReviewWatch.objects.exists()


class TestFailures:
    def test_a_broken_watch_records_its_error_and_the_others_still_poll(self, github, board):
        _, doing, _ = board
        github.open_pull(REPO, 1)
        stepless = WorkflowFactory()
        broken = watch_create(
            workflow=stepless,
            step=None,
            actor=None,
            repositories=[REPO],
            reviewer_login="rita",
            token=github.token,
            api_base_url=github.base_url,
        )
        make_watch(github, doing)
        reports = {r.watch_id: r for r in poll_due_watches()}
        assert reports[str(broken.pk)].error == "Invalid input. This workflow has no steps."
        broken.refresh_from_db()
        assert broken.last_error == "Invalid input. This workflow has no steps."
        assert broken.backoff_until is not None
        assert refs(doing) == ["github:acme/api#1"]

    def test_a_token_stored_under_an_old_secret_key_needs_the_fallback(self, github, board, settings):
        _, doing, _ = board
        github.open_pull(REPO, 1)
        watch = make_watch(github, doing)
        old_key = settings.SECRET_KEY
        settings.SECRET_KEY = "a-new-key-after-rotation"
        assert "cannot be decrypted" in poll_watch(watch=watch).error
        settings.SECRET_KEY_FALLBACKS = [old_key]
        assert poll_watch(watch=watch).admitted == ["github:acme/api#1"]


def test_the_background_worker_polls_due_watches(github, board):
    _, _, done = board
    github.open_pull(REPO, 7, "Worker found me")
    make_watch(github, done)
    out = StringIO()
    call_command("kandev_worker", "--once", stdout=out)
    assert "review watches polled: 1" in out.getvalue()
    assert refs(done) == ["github:acme/api#7"]


def test_admitted_review_tasks_auto_start_and_deferred_ones_leave_no_session(github, board, owner):
    """Reference scenario: an empty auto-start step with wip_limit 2, eight new pull requests."""
    from agents.models import AgentSession
    from boards.structure import step_update

    _, doing, _ = board
    step_update(step=doing, actor=owner, events={"on_enter": [{"type": "auto_start_agent"}]})
    for number in range(1, 9):
        github.open_pull(REPO, number)
    report = poll_watch(watch=make_watch(github, doing))
    assert report.admitted == ["github:acme/api#1", "github:acme/api#2"]
    sessions = AgentSession.objects.order_by("task__external_ref")
    assert [(s.task.external_ref, s.status) for s in sessions] == [
        ("github:acme/api#1", "starting"),
        ("github:acme/api#2", "starting"),
    ]
    assert Task.objects.filter(workflow=doing.workflow).count() == 2
