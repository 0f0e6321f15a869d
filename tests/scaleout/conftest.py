"""The scale-out tests need a Redis server: ``ZHIKU_TEST_REDIS_URL`` (``make test-scaleout`` and
``make test-postgres`` start a throwaway one). Each test empties that Redis database first."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

REDIS_URL = os.environ.get("ZHIKU_TEST_REDIS_URL")


@pytest.fixture
def broker_url() -> Iterator[str]:
    if not REDIS_URL:
        pytest.skip("no Redis: set ZHIKU_TEST_REDIS_URL (make test-scaleout starts one with redis-server)")
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    client.flushdb()
    client.close()
    yield REDIS_URL
