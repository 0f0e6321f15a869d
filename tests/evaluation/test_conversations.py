"""Conversation scores: per-turn containment, and a topic change answered from the turn before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from zhiku.answers.sources import Source
from zhiku.answers.types import Answer, Citation, QueryPlan
from zhiku.evaluation.conversations import evaluate_conversations, load_conversations

SET = [
    {
        "id": "en-1",
        "language": "en",
        "turns": [
            {"question": "Saturday opening?", "expected_file": "a.md", "expected_text": "10:00"},
            {"question": "Sunday?", "follows": "depends", "expected_file": "a.md", "expected_text": "11:00"},
            {
                "question": "And how long is the kettle's warranty?",
                "follows": "new_topic",
                "expected_file": "b.md",
                "expected_text": "two years",
            },
        ],
    }
]


def _answer(text: str, document: str, conversation_id: str) -> Answer:
    source = Source(1, "s1", "d", document, "ds", 0, text, 0.9)
    citations = [Citation(1, "s1", document)]
    plan = QueryPlan("q", "q", "q")
    return Answer(text, citations, [source], plan, "extractive", conversation_id=conversation_id)


def test_each_turn_is_asked_in_one_conversation_and_scored(tmp_path: Path) -> None:
    path = tmp_path / "set.json"
    path.write_text(json.dumps(SET), encoding="utf-8")
    replies = iter(
        [
            _answer("Open from 10:00 [1]", "a.md", "c1"),
            _answer("On Sunday from 11:00 [1]", "a.md", "c1"),
            _answer("It opens at 11:00 [1]", "a.md", "c1"),  # the previous turn's fact again
        ]
    )
    asked: list[tuple[str, str | None]] = []

    def ask(question: str, conversation_id: str | None) -> Answer:
        asked.append((question, conversation_id))
        return next(replies)

    report = evaluate_conversations(load_conversations(path), ask, answerer="extractive").to_json()
    assert [conversation for _, conversation in asked] == [None, "c1", "c1"]
    assert (report["answer_contains_first"], report["answer_contains_depends"]) == (1.0, 1.0)
    assert report["answer_contains_new_topic"] == 0.0 and report["new_topic_from_previous"] == 1
    assert report["citation_precision"] == round(2 / 3, 4)
    assert report["failures"][0]["from_previous_turn"] == "yes"


def test_a_later_turn_without_a_valid_follows_is_refused(tmp_path: Path) -> None:
    broken = json.loads(json.dumps(SET))
    del broken[0]["turns"][1]["follows"]
    path = tmp_path / "set.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(ValueError, match="turn 2"):
        load_conversations(path)


def test_the_bundled_set_loads() -> None:
    conversations = load_conversations()
    assert len(conversations) >= 60
    assert {conversation.language for conversation in conversations} == {"zh", "en"}
