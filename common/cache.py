"""Django's Redis cache with one client, and so one connection pool, per process.

Django keeps its cache objects per asyncio context, so under ASGI every request built its own
RedisCache, whose client opened a pool of its own (a new Redis connection per request), and
every cache call built a new redis.Redis (registering its ~170 reply callbacks again): about
a millisecond of server CPU on each request that touches the cache, such as a board read
after a change (boards/snapshots.py). Here all of a process's RedisCache objects share one
client per server and options; a pooled redis-py client is thread-safe, and its pool starts
over in a forked child.
"""

import threading

from django.core.cache.backends import redis

_clients: dict = {}
_clients_guard = threading.Lock()


class ProcessClient(redis.RedisCacheClient):
    def get_client(self, key=None, *, write=False):
        server = self._servers[self._get_connection_pool_index(write)]
        shared = (server, repr(sorted(self._pool_options.items())))
        client = _clients.get(shared)
        if client is None:
            with _clients_guard:
                if shared not in _clients:
                    pool = self._pool_class.from_url(server, **self._pool_options)
                    _clients[shared] = self._client(connection_pool=pool)
                client = _clients[shared]
        return client

    def incr(self, key, delta):
        """Django's, in one round trip: it asks EXISTS and then INCRBY, two for every step of
        a counter (the open-task quota's budget on every create)."""
        value = self.get_client(key, write=True).eval(INCR_EXISTING, 1, key, delta)
        if value is None:
            raise ValueError(f"Key '{key}' not found.")
        return value


INCR_EXISTING = "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('INCRBY', KEYS[1], ARGV[1]) end"


class RedisCache(redis.RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ProcessClient

    @property
    def server(self) -> str:
        """The URL of the Redis it writes to."""
        return self._servers[0]

    def pipeline(self):
        """A pipeline of this cache's client: its commands, and those `set_in()` queues, go in
        one round trip."""
        return self._cache.get_client(write=True).pipeline(transaction=False)

    def set_in(self, pipeline, key, value, timeout) -> None:
        """Queue `set(key, value, timeout)` on `pipeline`, written as `set()` writes it."""
        key = self.make_and_validate_key(key)
        pipeline.set(key, self._cache._serializer.dumps(value), ex=self.get_backend_timeout(timeout))
