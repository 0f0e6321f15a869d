"""``zhiku chat`` in the terminal: questions answered in turn, and the ways to leave."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def test_the_terminal_stream_never_prints_a_marker_that_names_no_source(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model writes ``[9]`` split across two deltas; only one source exists."""
    from tests.fixtures.openai_server import Reply, ScriptedChatServer

    with ScriptedChatServer(lambda body: Reply.streamed("Fifteen days of leave[1]", "[", "9].")) as server:
        monkeypatch.setenv("ZHIKU_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("ZHIKU_LLM_MODEL", "scripted")
        leave = tmp_path / "leave.txt"
        leave.write_text("Every employee has fifteen days of paid annual leave.", encoding="utf-8")
        run("ingest", str(leave), "--dataset", "handbook", "--create")
        result = run("ask", "How many days of annual leave do employees get?", "--answerer", "llm")
    assert "Fifteen days of leave[1]." in result.output
    assert "[9]" not in result.output


def test_eval_answers_scores_the_bundled_conversations(run: Run, tmp_path: Path) -> None:
    """Each conversation is asked turn by turn on the demo dataset (built on first use), scored
    per turn kind, and removed afterwards: an evaluation leaves no conversations behind."""
    import json

    report = json.loads(run("eval-answers", "--conversations", "--json").stdout)
    assert report["conversations"] >= 60 and report["turns"] > 2 * report["conversations"]
    for key in ("answer_contains_first", "answer_contains_depends", "answer_contains_new_topic"):
        assert 0.0 < report[key] <= 1.0, key
    assert report["new_topic_from_previous"] < report["new_topic_turns"]
    assert conversation_questions(tmp_path / "home") == []
    run("eval-answers", code=2)  # neither a set nor --conversations


def test_ask_in_agent_mode_shows_each_search(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fixtures.openai_server import Reply, ScriptedChatServer

    def handler(body: dict[str, Any]) -> Reply:
        if body.get("tools") and not any(m["role"] == "tool" for m in body["messages"]):
            return Reply.tool_call("kb_search", {"query": "paid annual leave"})
        return Reply.text("Fifteen days of paid leave[1].")

    leave = tmp_path / "leave.txt"
    leave.write_text("Every employee has fifteen days of paid annual leave.", encoding="utf-8")
    run("ingest", str(leave), "--dataset", "handbook", "--create")
    with ScriptedChatServer(handler) as server:
        monkeypatch.setenv("ZHIKU_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("ZHIKU_LLM_MODEL", "scripted")
        result = run("ask", "How much leave do I get?", "--agent")
    assert "(search 1: paid annual leave -> read [1])" in result.output
    assert "Fifteen days of paid leave[1]." in result.output
    run("ask", "How much leave?", "--agent", "--answerer", "extractive", code=1)
