"""One Redis client per process for the features that need more than the cache API (atomic scripts)."""

import os
from functools import lru_cache

import redis
from django.conf import settings


def redis_client() -> redis.Redis:
    return _client_for(os.getpid(), settings.REDIS_URL)


@lru_cache(maxsize=4)
def _client_for(pid: int, url: str) -> redis.Redis:
    # Keyed by pid: a pool inherited across fork must not be shared with the parent.
    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=30)
