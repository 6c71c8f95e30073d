import pytest

from agents import services
from agents.models import AgentSession, SessionStatus
from tests import concurrency
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
    return StepFactory(workflow=workflow, name="Agents", position=0, is_start_step=True, events=AUTO_START)


def session_of(task) -> AgentSession:
    return AgentSession.objects.filter(task=task).latest("created_at")


def statuses(tasks) -> list[str]:
    return [session_of(t).status for t in tasks]


def run_turn(session: AgentSession, *, outcome: str = "turn_completed") -> AgentSession:
    if session.status == SessionStatus.STARTING:
        session = services.session_event(session=session, type="boot_ready")
    return services.session_event(session=session, type=outcome)


def race(n: int, work) -> tuple[list, list]:
    """tests.concurrency.race, split into (results, errors)."""
    outcomes = concurrency.race(n, work)
    errors = [o for o in outcomes if isinstance(o, Exception)]
    return [None if isinstance(o, Exception) else o for o in outcomes], errors
