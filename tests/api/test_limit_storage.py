"""The rate limits' counters start no thread per counted request (the ``limits`` package's memory
storage started one whenever its 10 ms timer had ended) and still forget expired counts."""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api, context_of, make_app
from zhiku.api.limit_storage import SweptMemoryStorage

#: Seconds to wait for what must happen at once, on a busy machine.
GENEROUS = 60.0


@pytest.fixture
def counted_app(home: Path) -> Iterator[Flask]:
    app = make_app(home, workers=False, rate_limit_per_address=100, rate_limit_read=100)
    yield app
    context_of(app).close()


def test_counted_requests_start_no_thread(counted_app: Flask, monkeypatch: pytest.MonkeyPatch) -> None:
    (limiter,) = counted_app.extensions["limiter"]
    storage = limiter.storage
    assert isinstance(storage, SweptMemoryStorage)
    storage.timer.join(GENEROUS)  # the base class's first timer, started with the storage
    started: list[Any] = []
    real_timer = threading.Timer

    def counting_timer(*args: Any, **kwargs: Any) -> threading.Timer:
        timer = real_timer(*args, **kwargs)
        started.append(timer)
        return timer

    monkeypatch.setattr(threading, "Timer", counting_timer)
    client = counted_app.test_client()
    client.environ_base["REMOTE_ADDR"] = "203.0.113.7"  # counted per address and per key
    api = Api(client, context_of(counted_app).keys.create(name="counted")[1])
    for _ in range(3):
        assert api.get("/v1/datasets").status_code == 200
        for timer in started:
            timer.join(GENEROUS)  # a timer of the base class would end before the next request
    assert started == []
    assert storage.events  # the requests were counted


def test_expired_counts_are_swept() -> None:
    storage = SweptMemoryStorage()
    assert storage.acquire_entry("window", 5, 1)
    storage.incr("counter", 1)
    time.sleep(1.1)  # both expire after a second
    storage.sweep()
    assert "window" not in storage.events  # nor its empty list: one per address ever seen
    assert "counter" not in storage.storage


def test_the_sweeper_ends_with_its_storage() -> None:
    storage = SweptMemoryStorage()
    sweeper = storage.sweeper
    assert sweeper.is_alive()
    storage.timer.join(GENEROUS)  # the base class's first timer, which holds the storage
    del storage
    gc.collect()
    sweeper.join(GENEROUS)
    assert not sweeper.is_alive()
