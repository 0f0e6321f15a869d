"""The chat model of ``<!-- example: chat-model -->`` blocks: an OpenAI-compatible server on
127.0.0.1 that answers like a model that reads its prompt.

It answers a question with the first sentence of source ``[1]`` of the prompt, cited; fills the
answer loop's ``understand`` tool with the question; in agent mode, searches with the question
first and then answers from the passages found. Streaming works as the server fixture's does.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fixtures.openai_server import Reply, ScriptedChatServer, last_user_text

NOTHING = "The sources contain nothing on this question."
#: ``[n] (label)`` then the passage, up to the next source or the question
_SOURCE = re.compile(r"^\[(\d+)\][^\n]*\n(?P<text>.+?)(?=\n\n\[\d+\]|\n\n(?:Question|问题)|\Z)", re.M | re.S)
_MARKUP = re.compile(r"^\s*#+\s.*$|^\s*(?:[-*+]|\d+\.)\s+", re.M)  # headings, list bullets
_QUESTION = re.compile(r"(?:Question|问题)\s*[:：]\s*")
_SENTENCE = re.compile(r"^.+?(?:[.!?](?=\s|\Z)|[。！？]|\Z)", re.S)


def answer_like_a_model(body: dict[str, Any]) -> Reply:
    tools = {tool.get("function", {}).get("name") for tool in body.get("tools") or []}
    messages = body.get("messages", [])
    if "understand" in tools:
        return Reply.tool_call("understand", {"query": question_of(last_user_text(body)), "retrieve": True})
    if "kb_search" in tools and not any(message.get("role") == "tool" for message in messages):
        return Reply.tool_call("kb_search", {"query": question_of(last_user_text(body))})
    return Reply.text(cited_answer("\n\n".join(_texts(messages))))


def cited_answer(prompt: str) -> str:
    """The first sentence of the source numbered 1 (or the lowest number present), cited."""
    sources = {int(match.group(1)): match.group("text").strip() for match in _SOURCE.finditer(prompt)}
    if not sources:
        return NOTHING
    number = min(sources)
    sentence = _SENTENCE.match(" ".join(_MARKUP.sub("", sources[number]).split()))
    return f"{(sentence.group(0) if sentence else sources[number]).strip()} [{number}]"


def question_of(text: str) -> str:
    """The question a prompt ends with (``Question: ...``), or the whole text."""
    return _QUESTION.split(text)[-1].strip()


def _texts(messages: list[dict[str, Any]]) -> list[str]:
    texts = []
    for message in messages:
        content = message.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
        texts.append(str(content))
    return texts


def chat_model() -> ScriptedChatServer:
    """A started server (close it, or use it in ``with``)."""
    return ScriptedChatServer(answer_like_a_model)
