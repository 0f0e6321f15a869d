"""The bundled multi-turn conversation set (``zhiku/demo/conversations.json``): its shape, and that
every turn's expected text is in its file as the project's own extractors read it (what gets
indexed), inside one sentence (answers quote sentences), and that a turn which changes topic is
answered from another passage than the turn before it."""

from __future__ import annotations

import json
import re
from collections import Counter
from functools import cache
from typing import Any

import pytest

from zhiku.answers.sentences import split_sentences
from zhiku.demo.runner import CORPUS_DIR
from zhiku.demo.runner import corpus_files as indexed_files
from zhiku.evaluation.answers import normalise as answer_normalise
from zhiku.extractors import extract

CONVERSATIONS_FILE = CORPUS_DIR.parent / "conversations.json"
FOLLOWS = ("depends", "new_topic")
CJK = re.compile(r"[\u4e00-\u9fff]")
CONVERSATIONS: list[dict[str, Any]] = json.loads(CONVERSATIONS_FILE.read_text(encoding="utf-8"))


def squeeze(text: str) -> str:
    """Without whitespace: PDF and Markdown lines wrap mid-sentence."""
    return re.sub(r"\s+", "", text)


@cache
def passages() -> tuple[tuple[str, str], ...]:
    """(file name, text) of every Document the extractors make from the indexed corpus files."""
    return tuple(
        (path.name, document.text) for path in indexed_files() for document in extract(path, path.name)
    )


def passages_with(text: str) -> set[int]:
    needle = squeeze(text)
    return {i for i, (_name, content) in enumerate(passages()) if needle in squeeze(content)}


def later_turns(language: str) -> list[dict[str, Any]]:
    return [turn for conv in CONVERSATIONS if conv["language"] == language for turn in conv["turns"][1:]]


def test_the_set_is_large_and_bilingual() -> None:
    ids = [conv["id"] for conv in CONVERSATIONS]
    assert len(ids) >= 64
    assert len(set(ids)) == len(ids), [id_ for id_, n in Counter(ids).items() if n > 1]
    languages = Counter(conv["language"] for conv in CONVERSATIONS)
    assert set(languages) == {"zh", "en"}
    assert languages["zh"] >= 30 and languages["en"] >= 30, languages


@pytest.mark.parametrize("language", ["zh", "en"])
def test_depends_and_new_topic_are_balanced(language: str) -> None:
    follows = Counter(turn["follows"] for turn in later_turns(language))
    total = sum(follows.values())
    assert set(follows) == set(FOLLOWS), follows
    for kind in FOLLOWS:
        assert follows[kind] >= 0.4 * total, (kind, follows)


def test_three_turn_conversations_change_topic_both_ways() -> None:
    patterns = Counter(
        tuple(turn["follows"] for turn in conv["turns"][1:])
        for conv in CONVERSATIONS
        if len(conv["turns"]) == 3
    )
    assert patterns[("depends", "new_topic")] >= 2 and patterns[("new_topic", "depends")] >= 2, patterns


@pytest.mark.parametrize("conv", CONVERSATIONS, ids=lambda conv: conv["id"])
def test_conversation_shape(conv: dict[str, Any]) -> None:
    assert set(conv) == {"id", "language", "turns"}
    assert conv["id"].startswith(conv["language"] + "-")
    assert 2 <= len(conv["turns"]) <= 3
    names = {path.name for path in indexed_files()}
    asked = ""
    for i, turn in enumerate(conv["turns"]):
        keys = {"question", "expected_file", "expected_text"}
        assert set(turn) == (keys if i == 0 else keys | {"follows"}), turn
        assert i == 0 or turn["follows"] in FOLLOWS, turn
        assert turn["expected_file"] in names, turn
        assert 3 <= len(turn["expected_text"]) <= 30, turn
        assert bool(CJK.search(turn["question"])) == (conv["language"] == "zh"), turn["question"]
        # an answer must not hold the expected text just by repeating the questions
        asked += answer_normalise(turn["question"])
        assert answer_normalise(turn["expected_text"]) not in asked, turn
    texts = [answer_normalise(turn["expected_text"]) for turn in conv["turns"]]
    for a in texts:
        assert len(a) >= 3 and sum(a in b for b in texts) == 1, ("turns share an expected text", texts)


@pytest.mark.parametrize("conv", CONVERSATIONS, ids=lambda conv: conv["id"])
def test_each_expected_text_is_in_a_sentence_of_its_file(conv: dict[str, Any]) -> None:
    for turn in conv["turns"]:
        needle = squeeze(turn["expected_text"])
        in_file = [content for name, content in passages() if name == turn["expected_file"]]
        assert any(needle in squeeze(content) for content in in_file), turn
        assert any(
            needle in squeeze(sentence.text) for content in in_file for sentence in split_sentences(content)
        ), ("spans a sentence break", turn)


@pytest.mark.parametrize("conv", CONVERSATIONS, ids=lambda conv: conv["id"])
def test_a_new_topic_is_answered_from_another_passage(conv: dict[str, Any]) -> None:
    """No passage of the corpus holds both a topic-changing turn's expected text and the previous
    turn's, so an answer taken from the previous turn's source misses."""
    for previous, turn in zip(conv["turns"], conv["turns"][1:], strict=False):
        if turn["follows"] == "new_topic":
            shared = passages_with(turn["expected_text"]) & passages_with(previous["expected_text"])
            assert not shared, (turn, [passages()[i][1][:60] for i in shared])
