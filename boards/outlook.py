"""A task detail's `forecast` and `sle`: the flow app's figures about one task (when a
waiting task will likely start and finish; its age against its service level). The flow
app registers how to compute them (`register`, from its AppConfig.ready()), so boards never
reads flow's rules."""

from collections.abc import Callable

_registered: dict[str, Callable[..., dict]] = {}


def register(outlook: Callable[..., dict]) -> None:
    """`outlook(task, waiting) -> {"forecast": ..., "sle": ...}`."""
    _registered["outlook"] = outlook


def task_outlook(task, waiting: dict | None) -> dict:
    return _registered["outlook"](task, waiting)
