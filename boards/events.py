"""The only module that broadcasts board changes (and access changes) to live viewers.

Messages are sent after the transaction commits (`on_commit(robust=True)`), so a
rolled-back change sends nothing and a broken channel layer never fails a committed one.
"""

import asyncio
import logging
import os
import threading

import orjson
from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from django.core.cache import cache
from django.db import transaction

logger = logging.getLogger(__name__)


SEND_TIMEOUT_SECONDS = 10
_sender = {"loop": None, "pid": None}
_sender_guard = threading.Lock()


def board_group(workflow_id) -> str:
    return f"board.{workflow_id}"


def viewer_group(user_id) -> str:
    """Every open board socket of one user, whatever the board (access re-checks)."""
    return f"viewer.{user_id}"


def broadcast_on_commit(workflow_id, message: dict) -> None:
    # A named function, not a functools.partial: Django's robust on_commit logs a failure
    # with the callback's __qualname__, which a partial lacks (the failure would escape).
    def send_board_event():
        # Encoded once here, not once per viewer: every consumer forwards the same text.
        _send(board_group(workflow_id), {"type": "board.event", "text": orjson.dumps(message).decode()})

    transaction.on_commit(send_board_event, robust=True)


def access_changed_on_commit(user_id, *, ended_session: str = "") -> None:
    """After commit, the user's open board sockets re-check their access against the database
    and close when it is lost (product.md §7b). `ended_session` (accounts.websocket's digest)
    names a session being logged out, whose sockets close without a re-check: its row is
    deleted only after the logout signal."""

    def send_access_changed():
        _send(viewer_group(user_id), {"type": "access.changed", "ended_session": ended_session})

    transaction.on_commit(send_access_changed, robust=True)


def _send(group: str, event: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    if getattr(SyncToAsync.threadlocal, "main_event_loop_pid", None) == os.getpid():
        # Inside a request (sync_to_async): async_to_sync reuses the server's loop.
        async_to_sync(layer.group_send)(group, event)
        return
    # A plain thread (service call, reconciler, command): async_to_sync would build a new
    # event loop, and a new Redis connection, for every change.
    sending = layer.group_send(group, event)
    asyncio.run_coroutine_threadsafe(sending, _sender_loop()).result(timeout=SEND_TIMEOUT_SECONDS)


def _sender_loop() -> asyncio.AbstractEventLoop:
    """One long-lived event loop per process for sends from plain threads."""
    with _sender_guard:
        if _sender["pid"] != os.getpid():  # none yet, or inherited through fork (thread gone)
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="board-events", daemon=True).start()
            _sender.update(loop=loop, pid=os.getpid())
        return _sender["loop"]


# A committed change's live message is also kept a while in the shared cache, so a process
# holding an older snapshot of the board can apply it instead of rebuilding (boards/snapshots.py).
CHANGE_KEPT_SECONDS = 60


def change_key(workflow_id, version: int) -> str:
    return f"board-change:{workflow_id}:{version}"


def keep_change_on_commit(workflow_id, message: dict) -> None:
    """Keep a change's live message in the shared cache once it commits. Written after the
    commit, never before: a reader may find the new version before its message (it builds
    the board), never the message of a change that rolled back."""

    def keep_board_change():
        cache.set(change_key(workflow_id, message["version"]), orjson.dumps(message), CHANGE_KEPT_SECONDS)

    transaction.on_commit(keep_board_change, robust=True)
