"""The key check is cached for a second: a key revoked elsewhere stops working once that second
has passed, one revoked here at once; a new key works at once (misses are never cached)."""

from __future__ import annotations

from pathlib import Path

from zhiku import KnowledgeBase
from zhiku.api.keys import VERIFY_CACHE_SECONDS, ApiKeys


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _id(key: object) -> str | None:
    return getattr(key, "id", None)


def test_a_key_revoked_by_another_process_stops_within_the_ttl(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        clock = Clock()
        server = ApiKeys(kb.sessions, clock=clock)
        key, secret = server.create(name="app")
        assert _id(server.verify(secret)) == key.id
        ApiKeys(kb.sessions).revoke(key.id)  # `zhiku apikey revoke`, beside the server
        clock.now += VERIFY_CACHE_SECONDS / 2
        assert _id(server.verify(secret)) == key.id  # still within the cached second
        clock.now += VERIFY_CACHE_SECONDS / 2
        assert server.verify(secret) is None
        clock.now += 10 * VERIFY_CACHE_SECONDS
        assert server.verify(secret) is None


def test_a_key_revoked_here_stops_at_once_and_a_new_one_works_at_once(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        clock = Clock()
        keys = ApiKeys(kb.sessions, clock=clock)
        key, secret = keys.create()
        assert _id(keys.verify(secret)) == key.id
        keys.revoke(key.prefix)
        assert keys.verify(secret) is None
        assert keys.verify("zk-not-yet") is None
        other = ApiKeys(kb.sessions)
        new, new_secret = other.create()
        assert _id(keys.verify(new_secret)) == new.id
