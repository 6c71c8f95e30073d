"""Which tasks a pull may take, written once.

A pull takes its feeder's occupying tasks (live and admitted) that no bar below holds back.
Each `Bar` says, in one place, which tasks it holds back as a query filter (`tasks`) and as
a test of a board card (`card`), and the word the task detail gives for it
(`skipped_because`). The pull's candidates, the task detail's `waiting` and the board's
cards' `waiting` all derive from `BARS`; a new reason a task is never pulled (a blocker
not yet done, say) is one more `Bar`. A full cell, lane or person is not a bar: whether it
holds a task back depends on the step it would enter (`limits.held()`).
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q

from boards import sessions
from boards.models import Task


@dataclass(frozen=True)
class Bar:
    word: str  # the task detail's `skipped_because`
    tasks: Callable[[], Q]  # the tasks it holds back, over Task
    card: Callable[[dict], bool]  # does it hold back this board card?


def _working_card(card: dict) -> bool:
    session = card.get("session")
    return session is not None and session["status"] in sessions.registered().working_statuses


BARS = (
    # A blocked task keeps its place but is never pulled.
    Bar("blocked", lambda: Q(blocked_reason__gt=""), lambda card: bool(card["blocked_reason"])),
    # A blocker of it is unfinished (boards/dependencies.py keeps the list on its row).
    Bar("dependency", lambda: ~Q(blocked_by=[]), lambda card: bool(card["blocked_by"])),
    # An agent is working on it (its session starting or running): it stays where the agent works.
    Bar("agent_running", lambda: sessions.registered().working, _working_card),
)


def pullable(tasks):
    """`tasks` (a Task queryset) narrowed to those a pull may take."""
    tasks = tasks.occupying()
    for bar in BARS:
        tasks = tasks.exclude(bar.tasks())
    return tasks


def with_bars(tasks):
    """`tasks` annotated with whether each bar holds them back (read by `barred()`)."""
    return tasks.annotate(
        **{f"barred_{bar.word}": Exists(Task.objects.filter(bar.tasks(), pk=OuterRef("pk"))) for bar in BARS}
    )


def barred(task: Task) -> str | None:
    """The word of the first bar that holds back `task`, read with `with_bars()`."""
    return next((bar.word for bar in BARS if getattr(task, f"barred_{bar.word}")), None)


def card_pullable(card: dict) -> bool:
    """Might a pull take this board card (live; admitted, not ephemeral, no bar)?"""
    if not card["admitted"] or card["is_ephemeral"]:
        return False
    for bar in BARS:  # a loop, not any(): it runs over every changed card of a column
        if bar.card(card):
            return False
    return True
