"""The reference runner end to end: `manage.py agent_runner` in its own process, talking HTTP
to a real uvicorn server on a free port, running a real command per session."""

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import uvicorn
from django.db import connection
from django.test import override_settings

from accounts.models import ApiToken
from agents.models import AgentSession, SessionStatus
from boards import admission
from boards.models import Task
from tests.agents.conftest import REVIEW
from tests.factories import StepFactory

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
AGENT = """
import json, os, pathlib, sys, time
payload = json.load(sys.stdin)
env = {k: v for k, v in os.environ.items() if k.startswith("KANDEV_")}
out = pathlib.Path(os.environ["AGENT_RESULTS"]) / (env["KANDEV_TASK_ID"] + ".json")
out.write_text(json.dumps({"env": env, "stdin": payload}))
title = env["KANDEV_TASK_TITLE"]
if title.startswith("broken"):
    print("error: the tests do not compile")
    sys.exit(3)
if title.startswith("endless"):
    time.sleep(600)
print("review posted")
"""


def wait_for(predicate, what: str, timeout: float = 60):
    """Poll until `predicate()` holds; the timeout only bounds a hung test."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def server(monkeypatch):
    # Each request's connection is closed at its end, so none outlives the test database.
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    from kandev.asgi import application

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    instance = uvicorn.Server(uvicorn.Config(application, lifespan="off", log_level="warning"))
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    wait_for(lambda: instance.started, "uvicorn to start", timeout=30)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    instance.should_exit = True
    thread.join(timeout=30)
    sock.close()


@pytest.fixture
def review_step(workflow):
    review = StepFactory(workflow=workflow, name="Review", position=0, is_start_step=True, events=REVIEW)
    StepFactory(workflow=workflow, name="Done", position=1)
    return review


def start_runner(server, token, results: Path, tmp_path: Path) -> subprocess.Popen:
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "agent_runner",
            "--server",
            server,
            "--token",
            token,
            "--command",
            f"{sys.executable} {agent}",
            "--concurrency",
            "2",
            "--poll",
            "0.2",
            "--name",
            "test-runner",
        ],
        cwd=ROOT,
        env={**os.environ, "AGENT_RESULTS": str(results)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def status_of(task) -> str:
    return AgentSession.objects.get(task_id=task.pk).status


@override_settings(KANDEV_SESSION_LEASE_SECONDS=3)  # heartbeats every second
def test_the_runner_runs_sessions_reports_them_and_stops_on_sigterm(server, review_step, owner, tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    _, token = ApiToken.issue(user=owner, name="ci", workspace=review_step.workflow.workspace)

    def create(title, description=""):
        return admission.task_create(
            workflow=review_step.workflow,
            step=review_step,
            actor=owner,
            title=title,
            description=description,
        ).task

    good = create("good change", "Adds a test.")
    broken = create("broken change")
    runner = start_runner(server, token, results, tmp_path)
    try:
        wait_for(lambda: status_of(good) == SessionStatus.COMPLETED, "the good session to complete")
        wait_for(lambda: status_of(broken) == SessionStatus.FAILED, "the broken session to fail")

        # turn_completed ran on_turn_complete: the reviewed task moved on; the broken one stayed.
        assert Task.objects.get(pk=good.pk).step.name == "Done"
        assert Task.objects.get(pk=broken.pk).step.name == "Review"
        done = AgentSession.objects.get(task_id=good.pk)
        assert (done.runner, done.detail.strip()) == ("test-runner", "review posted")
        failed = AgentSession.objects.get(task_id=broken.pk)
        assert failed.detail.startswith("The command exited with 3.")
        assert "error: the tests do not compile" in failed.detail

        seen = json.loads((results / f"{good.pk}.json").read_text())
        assert seen["env"]["KANDEV_TASK_TITLE"] == "good change"
        assert seen["env"]["KANDEV_TASK_DESCRIPTION"] == "Adds a test."
        assert seen["env"]["KANDEV_STEP_NAME"] == "Review"
        assert seen["env"]["KANDEV_SESSION_ID"] == str(done.pk)
        assert seen["stdin"]["task"]["id"] == str(good.pk)
        assert seen["stdin"]["workflow"]["id"] == str(review_step.workflow_id)

        endless = create("endless change")
        wait_for(lambda: status_of(endless) == SessionStatus.RUNNING, "the endless session to run")
        first_lease = AgentSession.objects.get(task_id=endless.pk).lease_expires_at
        wait_for(
            lambda: AgentSession.objects.get(task_id=endless.pk).lease_expires_at > first_lease,
            "a heartbeat to extend the lease",
        )
        runner.send_signal(signal.SIGTERM)
        output, _ = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.communicate()
    assert runner.returncode == 0, output
    assert "runner stopped" in output
    stopped = AgentSession.objects.get(task_id=endless.pk)
    assert stopped.status == SessionStatus.FAILED
    assert stopped.detail.startswith("The runner stopped before the turn completed.")
