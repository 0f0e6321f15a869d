"""Answerers by name: the ``answerers`` registry an answer config's ``answerer`` names.

An answerer is made as ``factory(context)`` from the knowledge base's
:class:`~zhiku.core.plugin_context.PluginContext` (the chat model, lazily) and writes an answer
from numbered sources (:class:`Answerer`). Built-ins: ``llm`` (the chat model) and
``extractive`` (quotes the best source sentences, offline). ``auto`` is no answerer of its own:
``llm`` when a chat model is configured, else ``extractive``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from zhiku.core.errors import ConfigError
from zhiku.core.plugin_context import NO_CHAT_MODEL, PluginContext
from zhiku.core.registry import Registry

if TYPE_CHECKING:
    from zhiku.answers.extractive import ExtractiveAnswerer
    from zhiku.answers.memory import Turn
    from zhiku.answers.prompts import Language
    from zhiku.answers.sources import Source
    from zhiku.answers.types import Citation
    from zhiku.providers.llm import ChatModel

AUTO = "auto"


@dataclass(frozen=True)
class AnswerInput:
    """What an answerer answers from. ``question``: as asked, or standalone when a follow-up was
    condensed; ``search_query``: what retrieval searched; ``sources`` are numbered ``[n]``."""

    question: str
    search_query: str
    sources: Sequence[Source]
    history: Sequence[Turn]
    language: Language
    max_tokens: int
    repair_citations: bool
    #: The chosen intent's answer style, for answerers that write (None: the default rules).
    style: str | None = None


class Answerer(Protocol):
    """Writes the answer as it goes (``stream``), then gives its final text and citations
    (``finish``, over the joined pieces). An empty final text means "not found"."""

    def stream(self, given: AnswerInput) -> Iterator[str]: ...

    def finish(self, text: str, given: AnswerInput) -> tuple[str, list[Citation]]: ...


class AnswererFactory(Protocol):
    """The contract of the ``answerers`` registry."""

    def __call__(self, context: PluginContext, /) -> Answerer: ...


answerers: Registry[AnswererFactory] = Registry("answerers")


def answerer_names() -> list[str]:
    """Every ``answerer`` a config may name: ``auto`` and the installed answerers."""
    return [AUTO, *answerers.available()]


class _Written:
    """The chat model's answer, streamed; citations normalised and (if asked) repaired."""

    def __init__(self, chat: ChatModel) -> None:
        from zhiku.answers.generation import LlmAnswerer

        self._llm = LlmAnswerer(chat)

    def stream(self, given: AnswerInput) -> Iterator[str]:
        return self._llm.stream(
            given.question,
            given.sources,
            given.history,
            given.language,
            max_tokens=given.max_tokens,
            style=given.style,
        )

    def finish(self, text: str, given: AnswerInput) -> tuple[str, list[Citation]]:
        from zhiku.answers.citations import finish

        return finish(text, given.sources, repair_uncited=given.repair_citations)


class _Quoted:
    """The best-matching source sentences, quoted with their marker (one piece)."""

    def __init__(self, extractive: ExtractiveAnswerer) -> None:
        self._extractive = extractive

    def stream(self, given: AnswerInput) -> Iterator[str]:
        # what was searched beyond the question (earlier questions folded in) weighs in, less
        text, _ = self._extractive.answer(given.question, given.sources, context=given.search_query)
        if text:
            yield text

    def finish(self, text: str, given: AnswerInput) -> tuple[str, list[Citation]]:
        from zhiku.answers.citations import citations_of

        return text, citations_of(text, given.sources)


@answerers.register("llm")
def _llm(context: PluginContext, /) -> Answerer:
    if context.chat is None:
        raise _no_chat()
    try:
        return _Written(context.chat())
    except ConfigError as exc:
        raise _no_chat() from exc


@answerers.register("extractive")
def _extractive(context: PluginContext, /) -> Answerer:
    from zhiku.answers.extractive import ExtractiveAnswerer

    return _Quoted(ExtractiveAnswerer())


def _no_chat() -> ConfigError:
    return ConfigError(f"answerer 'llm' needs a chat model: {NO_CHAT_MODEL}")
