"""Django's cache in front of Redis keeps one client, and so one pool of connections, per
process (common/cache.py): Django makes a cache object per asyncio context, which under ASGI
is per request, and each of them used to open a Redis connection of its own."""

import pytest
from django.conf import settings
from django.core.cache import caches

pytestmark = pytest.mark.skipif(
    settings.CACHES["default"]["BACKEND"] != "common.cache.RedisCache", reason="the Redis cache needs REDIS_URL"
)


def test_every_cache_object_of_a_process_shares_one_redis_client():
    # Given two cache objects, made the way Django makes one for each request's context
    first, second = caches.create_connection("default"), caches.create_connection("default")
    assert first is not second

    # Then they talk to Redis through the same client and pool
    first.set("kandev-test-shared", 1, 5)
    assert second.get("kandev-test-shared") == 1
    assert first._cache.get_client() is second._cache.get_client()
    assert first._cache.get_client(write=True).connection_pool.max_connections == 2000
