"""Which tasks a pull may take is written once (boards/pullable.py): each bar holds back the
same tasks as a query (the pull's candidates) and as a test of a board card (the cards'
waiting), and the task detail names the first bar that holds a task back."""

from agents.models import AgentSession, SessionStatus
from boards.models import Task
from boards.pullable import barred, card_pullable, pullable, with_bars
from tests import factories


def test_each_bar_holds_back_the_same_tasks_as_a_query_and_as_a_card(workflow, make_task, api):
    backlog, _doing, _done = factories.board(workflow, pulls="none")
    plain = make_task(backlog, "plain")
    blocked = make_task(backlog, "blocked")
    with_session = {status: make_task(backlog, f"session {status}") for status in SessionStatus.values}
    blocked_and_running = make_task(backlog, "blocked and running")
    make_task(backlog, "ephemeral", is_ephemeral=True)
    Task.objects.filter(pk__in=[blocked.pk, blocked_and_running.pk]).update(blocked_reason="Waits for a part")
    for status, task in [*with_session.items(), (SessionStatus.RUNNING, blocked_and_running)]:
        AgentSession.objects.create(task=task, workflow=workflow, step=backlog, status=status)

    working = {with_session[SessionStatus.STARTING].pk, with_session[SessionStatus.RUNNING].pk}
    expected = {plain.pk} | {task.pk for task in with_session.values()} - working
    in_query = set(pullable(Task.objects.filter(step=backlog)).values_list("pk", flat=True))
    board = api.get(f"/api/v1/workflows/{workflow.pk}/board/").json()
    cards = next(step for step in board["steps"] if step["id"] == str(backlog.pk))["tasks"]
    as_cards = {Task._meta.pk.to_python(card["id"]) for card in cards if card_pullable(card)}
    assert in_query == as_cards == expected

    words = {task.pk: barred(task) for task in with_bars(Task.objects.occupying().filter(step=backlog))}
    assert (words[plain.pk], words[blocked.pk], words[blocked_and_running.pk]) == (None, "blocked", "blocked")
    assert {words[pk] for pk in working} == {"agent_running"}
