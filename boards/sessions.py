"""Agent sessions as the board shows them: each card's `session`, the board's `agents`
figures, and the tasks an agent is working on (a pull passes them over). Sessions are the
agents app's: it registers how to read them (`register`, from its AppConfig.ready()), so
boards never reads agents' models or rules."""

from collections.abc import Callable
from dataclasses import dataclass

from django.db.models import Q
from rest_framework import serializers


@dataclass(frozen=True)
class Sessions:
    """How the board reads agent sessions."""

    # (workflow_id=, task_ids=None, writes=()) -> {task id: its card's `session`}: see task_sessions
    task_sessions: Callable[..., dict]
    # (workflow) -> the board's `agents`: its and its workspace's agent capacity
    agent_figures: Callable[..., dict]
    # Over tasks: an agent is working on the task (its session holds a slot).
    working: Q
    # A card's `session.status` while its agent works.
    working_statuses: frozenset[str]
    # A card's `session`, for the API schema.
    serializer: type[serializers.Serializer]


_registered: dict[str, Sessions] = {}


def register(sessions: Sessions) -> None:
    _registered["sessions"] = sessions


def registered() -> Sessions:
    return _registered["sessions"]


def task_sessions(*, workflow_id, task_ids=None, writes=()) -> dict:
    """{task id: {"id", "status", "queue_position"}} for the board's tasks (or just `task_ids`),
    in one query. `writes` (`common.sql.fetch_together()` writes) are sent ahead of it, with it."""
    return registered().task_sessions(workflow_id=workflow_id, task_ids=task_ids, writes=writes)


def agent_figures(workflow) -> dict:
    return registered().agent_figures(workflow)
