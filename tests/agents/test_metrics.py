"""/metrics: values after a known sequence, access rules, multiprocess counters."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import ApiToken
from agents import services
from boards import admission
from boards.structure import cells_set, group_create, lane_create
from common.errors import WipLimitReached
from kandev.metrics_view import exposition
from tests.agents.conftest import AUTO_START, run_turn, session_of
from tests.factories import StepFactory, UserFactory, WorkflowFactory
from workflows.models import OnSessionLimit

ROOT = Path(__file__).resolve().parents[2]


def scrape(text: str) -> dict:
    """{(sample name, frozenset(labels)): value}"""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


@pytest.fixture
def staff(db):
    return UserFactory(username="ops", is_staff=True)


def metrics_text(user) -> str:
    client = Client()
    client.force_login(user)
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    return response.content.decode()


def test_values_after_a_known_sequence(board, make_task, owner, staff, django_capture_on_commit_callbacks):
    backlog, doing, done = board
    workflow = doing.workflow
    agents = StepFactory(
        workflow=WorkflowFactory(workspace=workflow.workspace, max_parallel_sessions=1),
        name="Agents",
        position=0,
        events=AUTO_START,
    )
    rejecting = StepFactory(
        workflow=WorkflowFactory(
            workspace=workflow.workspace,
            max_parallel_sessions=1,
            on_session_limit=OnSessionLimit.REJECT,
        ),
        name="Agents",
        position=0,
        events=AUTO_START,
    )
    agent_wf, reject_wf = str(agents.workflow_id), str(rejecting.workflow_id)
    before = scrape(metrics_text(staff))

    with django_capture_on_commit_callbacks(execute=True):
        first = make_task(doing, "a")
        make_task(doing, "b")
        make_task(backlog, "next")
        with pytest.raises(WipLimitReached):
            make_task(doing, "c")
        admission.task_move(task=first, to_step=done, actor=owner)  # pulls "next"
        running, waiting = make_task(agents, "running"), make_task(agents, "waiting")
        run_turn(session_of(running), outcome="boot_ready")
        make_task(rejecting, "started")
        make_task(rejecting, "rejected")
    after = scrape(metrics_text(staff))

    labels = {"workflow": str(workflow.pk), "step": str(doing.pk)}
    assert value(after, "kandev_step_occupancy", **labels) == 2
    assert value(after, "kandev_step_wip_limit", **labels) == 2
    assert value(after, "kandev_step_occupancy", workflow=str(workflow.pk), step=str(done.pk)) == 1
    assert value(after, "kandev_sessions_queued", workflow=agent_wf) == 1
    assert value(after, "kandev_sessions_running", workflow=agent_wf) == 1
    assert value(after, "kandev_sessions_starting", workflow=reject_wf) == 1

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("kandev_admissions_rejected_total", scope="step", reason="wip_limit_reached") == 1
    assert delta("kandev_tasks_pulled_total") == 1
    assert delta("kandev_sessions_rejected_total", workflow=reject_wf, scope="workflow") == 1
    assert delta("kandev_session_queue_wait_seconds_count", workflow=agent_wf) == 0

    with django_capture_on_commit_callbacks(execute=True):
        services.session_event(session=session_of(running), type="turn_completed")
    final = scrape(metrics_text(staff))
    assert value(final, "kandev_session_queue_wait_seconds_count", workflow=agent_wf) == 1
    assert value(final, "kandev_sessions_queued", workflow=agent_wf) == 0
    assert value(final, "kandev_sessions_starting", workflow=agent_wf) == 1
    assert session_of(waiting).status == "starting"


def test_group_gauges_are_read_at_scrape_time(board, make_task, owner, staff):
    backlog, doing, done = board
    group = group_create(workflow=doing.workflow, actor=owner, name="Finish", wip_limit=3, step_ids=[doing.pk, done.pk])
    make_task(doing, "a")
    make_task(done, "b")
    make_task(done, "scratch", is_ephemeral=True)  # counts nowhere
    make_task(backlog, "c")  # In Progress pulls it: the group holds three
    archived = make_task(done, "old", force=True, reason="legacy")
    admission.task_archive(task=archived, actor=owner)

    samples = scrape(metrics_text(staff))

    labels = {"workflow": str(doing.workflow_id), "group": str(group.pk)}
    assert value(samples, "kandev_group_occupancy", **labels) == 3
    assert value(samples, "kandev_group_wip_limit", **labels) == 3
    assert value(samples, "kandev_step_occupancy", workflow=str(doing.workflow_id), step=str(done.pk)) == 1


def test_lane_and_cell_gauges_are_read_at_scrape_time(board, make_task, owner, staff):
    backlog, doing, done = board
    workflow = doing.workflow
    first = workflow.lanes.get()
    second = lane_create(workflow=workflow, actor=owner, name="Team B", wip_limit=3)
    cells_set(lane=second, actor=owner, cells=[{"step_id": doing.pk, "wip_limit": 1}])
    make_task(doing, "a", lane_id=second.pk)
    make_task(done, "b", lane_id=second.pk)  # not an active step: not in the lane's count
    make_task(backlog, "c", lane_id=second.pk)
    make_task(doing, "d")  # the first lane

    samples = scrape(metrics_text(staff))

    wf = str(workflow.pk)
    assert value(samples, "kandev_lane_occupancy", workflow=wf, lane=str(second.pk)) == 1
    assert value(samples, "kandev_lane_wip_limit", workflow=wf, lane=str(second.pk)) == 3
    assert value(samples, "kandev_lane_occupancy", workflow=wf, lane=str(first.pk)) == 1
    assert ("kandev_lane_wip_limit", frozenset({"workflow": wf, "lane": str(first.pk)}.items())) in samples  # 0
    cell = {"workflow": wf, "lane": str(second.pk), "step": str(doing.pk)}
    assert value(samples, "kandev_cell_occupancy", **cell) == 1
    assert value(samples, "kandev_cell_wip_limit", **cell) == 1
    # Only cells with a limit have gauges.
    assert not [k for k in samples if k[0].startswith("kandev_cell") and ("lane", str(first.pk)) in k[1]]


def test_the_scrape_s_queries_do_not_grow_with_lanes_and_cells(board, owner, staff):
    backlog, doing, done = board
    workflow = doing.workflow

    def queries() -> int:
        with CaptureQueriesContext(connection) as context:
            exposition()
        return len(context)

    def add_lane(n):
        lane = lane_create(workflow=workflow, actor=owner, name=f"Lane {n}", wip_limit=2)
        cells_set(lane=lane, actor=owner, cells=[{"step_id": doing.pk, "wip_limit": 1}])

    add_lane(0)
    before = queries()
    for n in range(1, 4):
        add_lane(n)
    assert queries() == before


class TestAccess:
    def test_anonymous_401_and_non_staff_403(self, owner):
        assert Client().get("/metrics").status_code == 401
        client = Client()
        client.force_login(owner)
        assert client.get("/metrics").status_code == 403

    @override_settings(KANDEV_METRICS_TOKEN="s3cret-scraper")
    def test_the_metrics_bearer_token(self, db):
        assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scraper").status_code == 200
        assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401

    def test_an_empty_metrics_token_never_matches(self, db):
        assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 401

    def test_a_staff_api_token_but_not_a_runner_token(self, staff, workflow):
        _, key = ApiToken.issue(user=staff)
        _, runner_key = ApiToken.issue(user=staff, workspace=workflow.workspace)
        assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
        assert Client().get("/metrics", HTTP_AUTHORIZATION=f"Token {runner_key}").status_code == 401


INCREMENT = """
import django
django.setup()
from common import metrics
metrics.TASKS_PULLED.inc({n})
metrics.SESSION_QUEUE_WAIT.labels(workflow="w").observe(2)
"""
SCRAPE = """
import django, sys
django.setup()
from common import metrics
sys.stdout.write(metrics.counters_exposition().decode())
"""


def test_counters_add_up_across_processes(tmp_path):
    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "kandev.settings",
    }
    for n in (2, 3):
        subprocess.run([sys.executable, "-c", INCREMENT.format(n=n)], cwd=ROOT, env=env, check=True)
    text = subprocess.run(
        [sys.executable, "-c", SCRAPE],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    samples = scrape(text)
    assert value(samples, "kandev_tasks_pulled_total") == 5
    assert value(samples, "kandev_session_queue_wait_seconds_count", workflow="w") == 2
