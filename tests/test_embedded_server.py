"""The embedded default does everything in one process: a uvicorn server
with KANDEV_BACKGROUND=embedded runs the background work (kandev_worker's pass) itself, in a
thread its ASGI lifespan starts and stops. bin/test runs this file on SQLite as well."""

import os
import signal
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from agents import services
from agents.models import AgentSession
from agents.models import SessionStatus as S
from boards.models import Task
from integrations.watch import watch_create
from tests.factories import StepFactory
from tests.integrations.fake_github import FakeGitHub
from tests.servers import ROOT, Server, eventually, serving_test_database

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

AUTO_START = {"on_enter": [{"type": "auto_start_agent"}], "on_turn_complete": [], "on_exit": []}
EMBEDDED = {
    "KANDEV_BACKGROUND": "embedded",
    "REDIS_URL": "",  # the in-memory channel layer: one process, as embedded
    "KANDEV_RECONCILE_INTERVAL_SECONDS": "1",
    "LOG_LEVEL": "INFO",
    "KANDEV_OUTBOUND_ALLOW": "127.0.0.1",  # the fake GitHub: plain http on loopback
}


@pytest.fixture(scope="module")
def embedded_server(django_db_setup):
    """Two worker processes, each running the background work: passes must not collide."""
    with Server(serving_test_database(**EMBEDDED), workers=2) as server:
        yield server


def session_of(task) -> AgentSession:
    return AgentSession.objects.filter(task=task).latest("created_at")


def test_a_session_whose_lease_expires_is_failed_and_its_slot_freed(embedded_server, workflow, make_task, owner):
    workflow.max_parallel_sessions = 1
    workflow.save()
    step = StepFactory(workflow=workflow, name="Agents", is_start_step=True, events=AUTO_START)
    crashed, waiting = make_task(step, "crashed"), make_task(step, "waiting")
    claimed = services.session_claim(user=owner, runner="r1")
    services.session_event(session=claimed, type="boot_ready")
    assert session_of(waiting).status == S.QUEUED
    AgentSession.objects.filter(pk=claimed.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    eventually(lambda: session_of(crashed).status == S.FAILED)
    assert session_of(crashed).detail == "The runner's lease expired (no heartbeat)."
    eventually(lambda: session_of(waiting).status == S.STARTING)


def test_a_review_watch_that_is_due_is_polled(embedded_server, board):
    _, doing, _ = board
    with FakeGitHub() as github:
        github.open_pull("acme/api", 1)
        watch_create(
            workflow=doing.workflow,
            step=doing,
            actor=None,
            repositories=["acme/api"],
            reviewer_login="rita",
            token=github.token,
            api_base_url=github.base_url,
        )
        ref = "github:acme/api#1"
        eventually(lambda: Task.objects.filter(step=doing, external_ref=ref).exists())
        assert len(github.searches()) == 1  # claimed by one pass of one process


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_server_stops_cleanly_with_its_background_work(django_db_setup, signum):
    with Server(serving_test_database(**EMBEDDED), log_level="info") as server:
        eventually(lambda: "review watches polled" in server.log())  # a pass has run
        # After its shutdown uvicorn ends by the signal it got (SIGTERM) or with 0 (SIGINT);
        # None would mean it hung and was killed.
        assert server.stop(signum) in (0, -signum), server.log()
        log = server.log()
    assert "background work stopped" in log
    assert "Application shutdown complete" in log
    assert "Traceback" not in log


@pytest.mark.parametrize(
    ("env", "background"),
    [
        ({"DATABASE_URL": "", "REDIS_URL": ""}, "embedded"),
        ({"DATABASE_URL": "", "REDIS_URL": "redis://127.0.0.1:6379/0"}, "worker"),
        ({"DATABASE_URL": "postgresql://kandev@127.0.0.1/kandev", "REDIS_URL": ""}, "worker"),
        ({"DATABASE_URL": "", "REDIS_URL": "", "KANDEV_BACKGROUND": "worker"}, "worker"),
        ({"DATABASE_URL": "postgresql://kandev@127.0.0.1/kandev", "KANDEV_BACKGROUND": "embedded"}, "embedded"),
    ],
)
def test_the_background_defaults_to_embedded_only_on_sqlite_without_redis(env, background):
    shown = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.KANDEV_BACKGROUND)"],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "kandev.settings", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    assert shown.stdout.strip() == background
