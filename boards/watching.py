"""Whether the requesting person watches a task: the task detail's `watching`, per viewer
(never in the shared board read). Watching is the notifications app's: it registers how to
read it (`register`, from its AppConfig.ready()), so boards never reads its models."""

from collections.abc import Callable

_registered: dict[str, Callable] = {}


def register(reader: Callable) -> None:
    """`reader(user, task) -> bool`."""
    _registered["reader"] = reader


def watching(user, task) -> bool:
    return _registered["reader"](user, task)
