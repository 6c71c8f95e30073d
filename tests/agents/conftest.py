import threading

import pytest
from django.db import connection

from agents import services
from agents.models import AgentSession, SessionStatus
from tests.factories import StepFactory

AUTO_START = {"on_enter": [{"type": "auto_start_agent"}], "on_turn_complete": [], "on_exit": []}
REVIEW = {
    "on_enter": [{"type": "auto_start_agent"}],
    "on_turn_complete": [{"type": "move_to_next"}],
    "on_exit": [],
}


@pytest.fixture
def agent_step(workflow):
    """An unlimited step that starts an agent on every task it admits."""
    return StepFactory(
        workflow=workflow, name="Agents", position=0, is_start_step=True, events=AUTO_START
    )


def session_of(task) -> AgentSession:
    return AgentSession.objects.filter(task=task).latest("created_at")


def statuses(tasks) -> list[str]:
    return [session_of(t).status for t in tasks]


def run_turn(session: AgentSession, *, outcome: str = "turn_completed") -> AgentSession:
    if session.status == SessionStatus.STARTING:
        session = services.session_event(session=session, type="boot_ready")
    return services.session_event(session=session, type=outcome)


def race(n: int, work) -> tuple[list, list]:
    """Run `work(i)` in n threads released together; each closes its own connection."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def run(i):
        try:
            barrier.wait()
            results[i] = work(i)
        except Exception as exc:  # collected and asserted on by the caller
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results, errors
