"""Conversation memory: turns stored together, history within a token budget, scoped by owner."""

from __future__ import annotations

from pathlib import Path

import pytest

from zhiku.answers.memory import ConversationStore
from zhiku.core.db import make_engine, make_session_factory
from zhiku.core.db.migrate import upgrade
from zhiku.core.errors import NotFound


@pytest.fixture
def store(tmp_path: Path) -> ConversationStore:
    engine = make_engine(f"sqlite:///{tmp_path / 'meta.db'}")
    upgrade(engine)
    return ConversationStore(make_session_factory(engine), len)


def test_history_is_the_newest_whole_turns_within_the_budget_oldest_first(store: ConversationStore) -> None:
    conversation = store.create("第一个问题")
    for i in range(5):
        store.append_turn(conversation.id, f"q{i}", "a" * 10, answerer="extractive", plan={}, resources=[])
    # each turn costs len("qN") + 10 = 12 characters (the test counts characters as tokens)
    history = store.history(conversation.id, max_tokens=30)
    assert [turn.question for turn in history] == ["q3", "q4"]
    assert store.history(conversation.id, max_tokens=11) == []


def test_messages_keep_order_and_resources(store: ConversationStore) -> None:
    conversation = store.create("年假有几天？")
    message_id = store.append_turn(
        conversation.id, "年假有几天？", "十五天[1]", answerer="llm", plan={"q": 1}, resources=[{"number": 1}]
    )
    messages = store.messages(conversation.id)
    assert [(m.role, m.text) for m in messages] == [("user", "年假有几天？"), ("assistant", "十五天[1]")]
    assert messages[1].id == message_id and messages[1].resources == [{"number": 1}]
    assert conversation.name == "年假有几天？"


def test_another_owner_cannot_see_rename_or_delete(store: ConversationStore) -> None:
    mine = store.create("q", owner="key-a", user="alice")
    with pytest.raises(NotFound):
        store.get(mine.id, owner="key-b")
    with pytest.raises(NotFound):
        store.rename(mine.id, "x", owner=None)
    with pytest.raises(NotFound):
        store.delete(mine.id, owner="key-a", user="bob")
    assert [c.id for c in store.recent(owner="key-b")] == []
    assert store.rename(mine.id, "renamed", owner="key-a").name == "renamed"
    store.delete(mine.id, owner="key-a", user="alice")
    with pytest.raises(NotFound):
        store.get(mine.id, owner="key-a")


def test_recent_pages_newest_first(store: ConversationStore) -> None:
    ids = [store.create(f"q{i}").id for i in range(5)]
    store.append_turn(ids[0], "again", "yes", answerer="extractive", plan={}, resources=[])
    first = store.recent(limit=2)
    assert [c.id for c in first] == [ids[0], ids[4]]
    rest = store.recent(limit=10, before=first[-1].id)
    assert [c.id for c in rest] == [ids[3], ids[2], ids[1]]
