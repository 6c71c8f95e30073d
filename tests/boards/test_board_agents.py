"""Agents on the board: each task's `session` and the
board's `agents` figures, in the board read and kept live by the messages of every session
change, on this board and on the other boards of the workspace."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents import services
from agents.models import AgentSession, SessionStatus
from boards import admission
from tests.agents.conftest import AUTO_START
from tests.conftest import member_client
from tests.factories import StepFactory, WorkflowFactory
from workflows.models import Role, Workflow

S = SessionStatus


def board_of(api, workflow) -> dict:
    response = api.get(f"/api/v1/workflows/{workflow.pk}/board/")
    assert response.status_code == 200
    return response.json()


def sessions_on(board: dict) -> dict:
    return {task["title"]: task["session"] for step in board["steps"] for task in step["tasks"]}


def shown(board: dict) -> dict:
    """{title: (status, queue_position)} of the cards that show a session."""
    return {title: (s["status"], s["queue_position"]) for title, s in sessions_on(board).items() if s}


def session_of(task) -> AgentSession:
    return AgentSession.objects.filter(task=task).latest("created_at")


@pytest.fixture
def agents(workflow):
    """Agents (starts an agent on every task it admits) -> Done; two sessions at a time, queued."""
    workflow.max_parallel_sessions = 2
    workflow.save()
    agents = StepFactory(workflow=workflow, name="Agents", position=0, is_start_step=True, events=AUTO_START)
    done = StepFactory(workflow=workflow, name="Done", position=1, kind="done")
    return agents, done


def test_the_board_shows_each_task_s_session_and_the_agent_figures(api, workflow, agents, make_task):
    step, done = agents
    tasks = {title: make_task(step, title) for title in ("a", "b", "c", "d")}
    make_task(done, "plain")
    services.session_event(session=session_of(tasks["a"]), type="boot_ready")

    board = board_of(api, workflow)
    # c and d wait for a slot, in promotion order; a's agent runs, b's starts
    assert shown(board) == {"a": ("running", None), "b": ("starting", None), "c": ("queued", 1), "d": ("queued", 2)}
    assert sessions_on(board)["plain"] is None
    # b's holds a slot, but no runner has claimed it: it is not counted as running
    assert board["agents"] == {
        "running": 1,
        "unclaimed": 1,
        "queued": 2,
        "workflow_limit": 2,
        "workspace_limit": 0,
        "workspace_running": 1,
        "workspace_unclaimed": 1,
        "workspace_queued": 2,
    }
    assert sessions_on(board)["b"]["waiting_for_runner"] and not sessions_on(board)["a"]["waiting_for_runner"]
    assert sessions_on(board)["a"]["id"] == str(session_of(tasks["a"]).pk)


def test_a_failed_agent_shows_while_its_task_stays_in_the_step_and_a_completed_one_not(
    api, workflow, agents, make_task, owner
):
    step, done = agents
    failing, finishing = make_task(step, "failing"), make_task(step, "finishing")
    services.session_event(session=session_of(failing), type="failed", detail="crashed")
    services.session_event(session=session_of(finishing), type="boot_ready")
    services.session_event(session=session_of(finishing), type="turn_completed")
    assert shown(board_of(api, workflow)) == {"failing": ("failed", None)}

    # A new run replaces the failure on the card; moving on leaves it behind
    services.session_start(task=failing, actor=owner)
    assert shown(board_of(api, workflow)) == {"failing": ("starting", None)}
    services.session_event(session=session_of(failing), type="failed")
    admission.task_move(task=failing, to_step=done, actor=owner)
    assert shown(board_of(api, workflow)) == {}


@pytest.mark.parametrize("per_kind", [1, 10])
def test_the_board_read_costs_the_same_queries_whatever_the_sessions(api, workflow, agents, make_task, per_kind):
    step, _ = agents
    workflow.max_parallel_sessions = per_kind
    workflow.save()
    tasks = [make_task(step, f"t{i}") for i in range(3 * per_kind)]  # a third starting, two queued
    for task in tasks[: per_kind // 2 + 1]:
        services.session_event(session=session_of(task), type="failed")  # each promotes one
    with CaptureQueriesContext(connection) as queries:
        board = board_of(api, workflow)
    assert (
        len(queries) == 7
    )  # the role with the workflow, steps, tasks, sessions, agent figures, labels, lanes (and cells)
    assert sum(1 for s in shown(board).values() if s[0] == "queued") == board["agents"]["queued"] > 0


def test_a_create_reads_no_session_and_a_move_one_statement(workflow, make_task, owner, spelt):
    backlog = StepFactory(workflow=workflow, name="Backlog", position=0, is_start_step=True)
    done = StepFactory(workflow=workflow, name="Done", position=1)
    with CaptureQueriesContext(connection) as creating:
        task = make_task(backlog, "new")
    with CaptureQueriesContext(connection) as moving:
        admission.task_move(task=task, to_step=done, actor=owner)
    session_table = AgentSession._meta.db_table
    assert not [q for q in creating if session_table in spelt(q["sql"])]
    assert len([q for q in moving if session_table in spelt(q["sql"])]) == 1


def test_every_session_change_s_message_brings_a_viewer_to_the_board_as_read(
    api, workflow, agents, make_task, owner, broadcasts
):
    # Given a viewer holding the board as read, then applying each message as it arrives
    step, done = agents
    board = board_of(api, workflow)
    seen, figures = sessions_on(board), board["agents"]
    tasks = {}

    def create(title):
        tasks[title] = make_task(step, title)

    def event(title, type_):
        services.session_event(session=session_of(tasks[title]), type=type_)

    def expire(session):
        AgentSession.objects.filter(pk=session.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))
        assert services.expire_board_leases(workflow_id=workflow.pk) == 1

    operations = [
        ("task.created", lambda: create("a")),  # starting
        ("task.created", lambda: create("b")),  # starting
        ("task.created", lambda: create("c")),  # queued 1st
        ("task.created", lambda: create("d")),  # queued 2nd
        ("session.updated", lambda: event("a", "boot_ready")),
        ("session.updated", lambda: event("a", "turn_completed")),  # c starts, d moves up to 1st
        ("session.updated", lambda: event("b", "failed")),  # d starts; b shows its failure
        ("task.moved", lambda: admission.task_move(task=tasks["b"], to_step=done, actor=owner)),
        ("session.updated", lambda: services.session_start(task=tasks["b"], actor=owner)),  # queued
        ("session.updated", lambda: services.session_cancel(session=session_of(tasks["c"]), actor=owner)),
        ("task.archived", lambda: admission.task_archive(task=tasks["d"], actor=owner)),
        ("session.updated", lambda: event("b", "boot_ready")),
        ("session.updated", lambda: expire(session_of(tasks["b"]))),  # its runner went silent
    ]
    for kind, operation in operations:
        (message,) = broadcasts(workflow, operation)
        assert message["type"] == kind
        # Then each message carries whole tasks, their session inside, and the figures
        for task in message["tasks"]:
            assert {"title", "step_id", "priority", "session"} <= task.keys()
            if task["archived_at"]:
                seen.pop(task["title"], None)
            else:
                seen[task["title"]] = task["session"]
        figures = message.get("agents", figures)
        board = board_of(api, workflow)
        assert (seen, figures) == (sessions_on(board), board["agents"]), kind
    assert shown(board) == {"b": ("failed", None)}
    assert figures["running"] == figures["queued"] == 0


def test_a_session_change_shows_on_the_other_boards_of_the_workspace(api, workflow, agents, make_task, broadcasts):
    # Given a second board of the same workspace, which shares its limit of 1
    workspace = workflow.workspace
    workspace.max_concurrent_sessions = 1
    workspace.save()
    other = WorkflowFactory(workspace=workspace, name="Other")
    other_step = StepFactory(workflow=other, name="Agents", position=0, events=AUTO_START)
    waiting = make_task(other_step, "waiting")  # takes the workspace's one slot
    here = {}

    # When a task here queues behind it, and then the other board's agent finishes
    (message,) = broadcasts(other, lambda: here.setdefault("task", make_task(agents[0], "here")))
    assert message["type"] == "session.updated" and message["tasks"] == []
    assert (message["agents"]["workspace_unclaimed"], message["agents"]["workspace_queued"]) == (1, 1)

    messages = broadcasts(workflow, lambda: services.session_event(session=session_of(waiting), type="failed"))

    # Then this board promotes its queued session and shows it, with the workspace's figures
    (promoted,) = messages
    assert [t["session"]["status"] for t in promoted["tasks"]] == ["starting"]
    assert promoted["agents"] == board_of(api, workflow)["agents"]
    assert (promoted["agents"]["workspace_unclaimed"], promoted["agents"]["workspace_limit"]) == (1, 1)


def test_raising_the_workspace_limit_starts_queued_sessions_on_every_board(
    api, workflow, agents, make_task, broadcasts
):
    workspace = workflow.workspace
    workspace.max_concurrent_sessions = 1
    workspace.save()
    other = WorkflowFactory(workspace=workspace, name="Other")
    make_task(agents[0], "running")
    queued = make_task(StepFactory(workflow=other, name="Agents", position=0, events=AUTO_START), "queued")
    assert session_of(queued).status == S.QUEUED

    def patch():
        response = api.patch(f"/api/v1/workspaces/{workspace.pk}/", {"max_concurrent_sessions": 3}, format="json")
        assert response.status_code == 200 and response.json()["max_concurrent_sessions"] == 3

    # (this board is told twice: by the limit, then by the other board's promotion)
    messages = broadcasts(workflow, patch)
    assert messages and all(m["agents"]["workspace_limit"] == 3 for m in messages)
    assert session_of(queued).status == S.STARTING
    assert board_of(api, other)["agents"]["workspace_unclaimed"] == 2  # no runner claimed either


def test_only_owners_change_the_workspace_limit(workflow):
    for role in (Role.MEMBER, Role.VIEWER):
        client = member_client(workflow.workspace, role)
        response = client.patch(
            f"/api/v1/workspaces/{workflow.workspace_id}/", {"max_concurrent_sessions": 9}, format="json"
        )
        assert response.status_code == 403
    workflow.workspace.refresh_from_db()
    assert workflow.workspace.max_concurrent_sessions is None


def test_raising_the_board_limit_starts_its_queued_session_and_shows_the_new_limit(
    api, workflow, agents, make_task, broadcasts
):
    step, _ = agents
    tasks = [make_task(step, f"t{i}") for i in range(3)]
    assert session_of(tasks[2]).status == S.QUEUED

    def patch():
        response = api.patch(f"/api/v1/workflows/{workflow.pk}/", {"max_parallel_sessions": 3}, format="json")
        assert response.status_code == 200

    updated, promoted = broadcasts(workflow, patch)
    assert (updated["type"], updated["agents"]["workflow_limit"]) == ("workflow.updated", 3)
    assert promoted["type"] == "session.updated"
    assert [t["session"]["status"] for t in promoted["tasks"]] == ["starting"]
    assert promoted["version"] == Workflow.objects.get(pk=workflow.pk).version
