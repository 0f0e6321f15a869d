"""``zhiku chat`` in the terminal: questions answered in turn, and the ways to leave."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Run
from zhiku import KnowledgeBase
from zhiku.answers.prompts import NOTHING_FOUND


def conversation_questions(home: Path) -> list[str]:
    """The questions stored in the knowledge base's conversations (each asked one is stored)."""
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        store = kb.conversations
        return [
            message.text
            for conversation in store.recent(limit=100)
            for message in store.messages(conversation.id, limit=100)
            if message.role == "user"
        ]


@pytest.mark.parametrize("word", ["/exit", "/quit", "exit", "quit", " /EXIT ", "Quit"])
def test_an_exit_word_ends_the_chat_without_being_asked(run: Run, tmp_path: Path, word: str) -> None:
    result = run("chat", "--answerer", "extractive", stdin=f"Where is the office?\n{word}\nNot asked?\n")
    assert result.output.count(NOTHING_FOUND["en"]) == 1
    assert conversation_questions(tmp_path / "home") == ["Where is the office?"]


def test_end_of_input_ends_the_chat(run: Run, tmp_path: Path) -> None:
    result = run("chat", "--answerer", "extractive", stdin="Where is the office?\n")
    assert result.output.count(NOTHING_FOUND["en"]) == 1
    assert conversation_questions(tmp_path / "home") == ["Where is the office?"]
    run("chat", stdin="")  # Ctrl-D at the first prompt
