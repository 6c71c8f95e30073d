"""The only module that broadcasts board changes (and access changes) to live viewers.

Messages are sent after the transaction commits (`on_commit(robust=True)`), so a
rolled-back change sends nothing and a broken channel layer never fails a committed one.
"""

import asyncio
import logging
import os
import threading
import time

import orjson
from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.core.cache import cache, caches
from django.db import transaction

from common.cache import RedisCache

logger = logging.getLogger(__name__)


SEND_TIMEOUT_SECONDS = 10
_sender = {"loop": None, "pid": None}
_sender_guard = threading.Lock()


def board_group(workflow_id) -> str:
    return f"board.{workflow_id}"


def viewer_group(user_id) -> str:
    """Every open board socket of one user, whatever the board (access re-checks)."""
    return f"viewer.{user_id}"


def inbox_group(user_id) -> str:
    """Every open inbox socket (the header's bell) of one user, on any page."""
    return f"inbox.{user_id}"


def inbox_changed_on_commit(user_ids) -> None:
    """After commit, each user's open bells read their unread count again (news arrived, or
    was read in another tab)."""
    user_ids = sorted(set(user_ids))

    def send_inbox_changed():
        for user_id in user_ids:
            _send(inbox_group(user_id), {"type": "inbox.changed"})

    if user_ids:
        transaction.on_commit(send_inbox_changed, robust=True)


def broadcast_on_commit(workflow_id, message: dict) -> None:
    # A named function, not a functools.partial: Django's robust on_commit logs a failure
    # with the callback's __qualname__, which a partial lacks (the failure would escape).
    def send_board_event():
        # Encoded once here, not once per viewer: every consumer forwards the same text.
        _send(board_group(workflow_id), {"type": "board.event", "text": orjson.dumps(message).decode()})

    transaction.on_commit(send_board_event, robust=True)


def publish_change_on_commit(workflow_id, message: dict) -> None:
    """Once the change commits, keep its live message (`keep_change_on_commit`) and then send
    it to the board's viewers (`broadcast_on_commit`). When the cache and the channel layer
    are the same Redis, both go from this thread in one round trip (two when the board has
    viewers) instead of five and a hop to the event loop: the same keys, written as the cache
    and channels_redis write them."""
    layer, kept_in = get_channel_layer(), caches["default"]
    if not _one_redis(layer, kept_in):
        keep_change_on_commit(workflow_id, message)
        broadcast_on_commit(workflow_id, message)
        return

    def publish_board_change():
        text = orjson.dumps(message)  # encoded once, for the cache and for every viewer
        event = {"type": "board.event", "text": text.decode()}
        group = layer._group_key(board_group(workflow_id))
        now = time.time()
        pipeline = kept_in.pipeline()
        kept_in.set_in(pipeline, change_key(workflow_id, message["version"]), text, CHANGE_KEPT_SECONDS)
        pipeline.zremrangebyscore(group, min=0, max=int(now) - layer.group_expiry)
        pipeline.zrange(group, 0, -1)
        *_, channels = pipeline.execute()
        if channels:
            _, messages, capacities = layer._map_channel_keys_to_connection([c.decode() for c in channels], event)
            keys = list(messages)
            args = [*messages.values(), *capacities.values(), int(now) - int(layer.expiry), now, layer.expiry]
            over_capacity = pipeline.eval(GROUP_SEND, len(keys), *keys, *args).execute()[0]
            if over_capacity:
                logger.info("%s of %s channels over capacity in group %s", over_capacity, len(channels), group)

    transaction.on_commit(publish_board_change, robust=True)


def _one_redis(layer, kept_in) -> bool:
    """The channel layer and the cache are one Redis server (a single host: one connection)."""
    return (
        type(layer) is RedisChannelLayer
        and layer.ring_size == 1
        and isinstance(kept_in, RedisCache)
        and layer.hosts[0].get("address") == kept_in.server
    )


# channels_redis's group send, in one script: drop each channel's expired messages, then add
# the message where the channel has room. KEYS: the channels' keys; ARGV: their messages,
# their capacities, the expiry cutoff, now, the expiry.
GROUP_SEND = """
local n = #KEYS
local cutoff, now, expiry = ARGV[2 * n + 1], ARGV[2 * n + 2], ARGV[2 * n + 3]
local over_capacity = 0
for i = 1, n do
    redis.call('ZREMRANGEBYSCORE', KEYS[i], 0, cutoff)
    if redis.call('ZCOUNT', KEYS[i], '-inf', '+inf') < tonumber(ARGV[n + i]) then
        redis.call('ZADD', KEYS[i], now, ARGV[i])
        redis.call('EXPIRE', KEYS[i], expiry)
    else
        over_capacity = over_capacity + 1
    end
end
return over_capacity
"""


def access_changed_on_commit(user_id, *, ended_session: str = "") -> None:
    """After commit, the user's open board sockets re-check their access against the database
    and close when it is lost. `ended_session` (accounts.websocket's digest)
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
