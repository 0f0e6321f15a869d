"""Progress keys and hand-over messages on a real Redis (what workers tell the API processes)."""

from __future__ import annotations

import threading
import time

from zhiku.knowledge_base.runtime.worker_signals import open_signals


def test_progress_is_read_back_cleared_and_expires(broker_url: str) -> None:
    signals = open_signals(broker_url, ttl=1)
    assert signals is not None
    try:
        signals.set_progress("doc-a", 4, 16)
        signals.set_progress("doc-b", 16, 16)
        assert signals.progress("doc-a") == (4, 16)
        signals.clear_progress(["doc-a"])
        assert signals.progress("doc-a") is None
        assert signals.progress("doc-b") == (16, 16)
        deadline = time.monotonic() + 10
        while signals.progress("doc-b") is not None:  # a killed worker's progress goes by itself
            assert time.monotonic() < deadline, "the progress key never expired"
            time.sleep(0.1)
    finally:
        signals.close()


def test_a_hand_over_wakes_the_listener_before_its_timeout(broker_url: str) -> None:
    signals = open_signals(broker_url, ttl=60)
    assert signals is not None
    listener = signals.listener()
    stopping = threading.Event()
    try:
        started = time.monotonic()
        listener.wait(0.3, stopping)  # subscribes; nothing was handed over: waits it out
        assert time.monotonic() - started >= 0.3

        threading.Timer(0.2, signals.handed_over).start()
        started = time.monotonic()
        listener.wait(30, stopping)
        assert time.monotonic() - started < 15, "the hand-over message did not wake the listener"

        threading.Timer(0.2, stopping.set).start()
        started = time.monotonic()
        listener.wait(30, stopping)  # a stopping writer is not held up either
        assert time.monotonic() - started < 15
    finally:
        listener.close()
        signals.close()


def test_no_signals_without_a_redis_broker() -> None:
    assert open_signals("amqp://guest@127.0.0.1//", ttl=60) is None
    assert open_signals(None, ttl=60) is None
