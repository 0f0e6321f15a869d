"""The chat model's answer: sources and history in, text with ``[n]`` markers streamed out."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from zhiku.answers.citations import strip_markers
from zhiku.answers.memory import Turn
from zhiku.answers.prompts import ANSWER_SYSTEM, question_block, sources_block
from zhiku.answers.sources import Source
from zhiku.providers.llm import ChatModel
from zhiku.text.language import Language


def answer_messages(
    question: str,
    sources: Sequence[Source],
    history: Sequence[Turn],
    language: Language,
    style: str | None = None,
) -> list[dict[str, Any]]:
    """System rules (and an intent's ``style`` after them), the history (answers without their
    markers: old numbers would point at sources this turn does not have), then the sources and the
    question in one user message."""
    system = with_style(ANSWER_SYSTEM[language], style)
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for turn in history:
        messages.append({"role": "user", "content": turn.question})
        messages.append({"role": "assistant", "content": strip_markers(turn.answer)})
    user = f"{sources_block(sources, language)}\n\n{question_block(question, language)}"
    messages.append({"role": "user", "content": user})
    return messages


class LlmAnswerer:
    name = "llm"

    def __init__(self, chat: ChatModel) -> None:
        self._chat = chat

    def stream(
        self,
        question: str,
        sources: Sequence[Source],
        history: Sequence[Turn],
        language: Language,
        *,
        max_tokens: int,
        style: str | None = None,
    ) -> Iterator[str]:
        """The answer's text as the model writes it."""
        messages = answer_messages(question, sources, history, language, style)
        return self._chat.stream(messages, max_tokens=max_tokens)


def with_style(rules: str, style: str | None) -> str:
    """A system prompt with an intent's answer style after its rules (which still hold)."""
    return f"{rules}\n\n{style}" if style else rules
