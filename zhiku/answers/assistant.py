"""The answer loop: question → plan → retrieval → numbered sources → cited answer → memory.

:meth:`Assistant.events` is the one implementation; :meth:`Assistant.ask` collects its events into
an :class:`Answer`. Either way the sources are fixed before the answerer starts, so a streamed
``[n]`` means the same source as in the final answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from zhiku.answers.answerers import AUTO, Answerer, AnswerInput, answerers
from zhiku.answers.config import AnswerConfig
from zhiku.answers.memory import ConversationStore, Turn
from zhiku.answers.prompts import NOTHING_FOUND, REFUSAL, language_of
from zhiku.answers.sources import Source, assemble_sources
from zhiku.answers.types import Answer, AnswerEvent, Citation, QueryPlan
from zhiku.answers.understanding import QueryUnderstanding
from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Hit
from zhiku.core.plugin_context import PluginContext
from zhiku.providers.llm import ChatModel

#: Retrieval as the assistant sees it: the plan and the datasets asked (None: all) → hits.
Retrieve = Callable[[QueryPlan, Sequence[str] | None], list[Hit]]


@dataclass(frozen=True)
class AskRequest:
    question: str
    datasets: Sequence[str] | None = None
    conversation_id: str | None = None
    remember: bool = True  # store the turn (a new conversation when conversation_id is None)
    user: str = ""
    owner: str | None = None  # the API key id the conversation belongs to
    history: Sequence[Turn] | None = None  # given by the caller (stateless APIs), not stored
    message_id: str | None = None  # the stored answer's id, when the caller must know it first


class Assistant:
    def __init__(
        self,
        *,
        retrieve: Retrieve,
        understanding: QueryUnderstanding,
        conversations: ConversationStore,
        chat_model: Callable[[], ChatModel | None],
        context: PluginContext,
        count_tokens: Callable[[str], int],
    ) -> None:
        """``chat_model``: the chat model, None when none is configured (``auto`` answers
        without); ``context``: what answerers are made from (``answerers`` registry)."""
        self._retrieve = retrieve
        self._understanding = understanding
        self._conversations = conversations
        self._chat_model = chat_model
        self._context = context
        self._answerers: dict[str, Answerer] = {}
        self._count_tokens = count_tokens

    def ask(self, request: AskRequest, config: AnswerConfig) -> Answer:
        for event in self.events(request, config):
            if event.answer is not None:
                return event.answer
        raise AssertionError("the answer loop ended without an answer")  # events() always ends with one

    def events(self, request: AskRequest, config: AnswerConfig) -> Iterator[AnswerEvent]:
        """``plan``, ``sources``, ``delta``…, ``answer`` (see :class:`AnswerEvent`). Errors the
        caller can act on (an unknown conversation, no chat model for ``answerer="llm"``) are
        raised before the first event."""
        started = time.perf_counter()
        timings: dict[str, float] = {}
        answerer = self._answerer(config)
        history: list[Turn] = list(request.history or [])
        if request.conversation_id is not None:
            self._conversations.get(request.conversation_id, user=request.user or None, owner=request.owner)
            history = self._conversations.history(request.conversation_id, max_tokens=config.history_tokens)
        return self._run(request, config, answerer, history, started, timings)

    def _run(
        self,
        request: AskRequest,
        config: AnswerConfig,
        answerer: tuple[str, Answerer],
        history: list[Turn],
        started: float,
        timings: dict[str, float],
    ) -> Iterator[AnswerEvent]:
        mark = time.perf_counter()
        plan = self._understanding.plan(request.question, history, config)
        timings["plan"] = _ms(mark)
        yield AnswerEvent("plan", plan=plan)
        language = language_of(request.question)

        sources: list[Source] = []
        if plan.action == "answer":
            mark = time.perf_counter()
            hits = self._retrieve(plan, _within(plan.datasets, request.datasets))
            sources = assemble_sources(
                hits,
                max_tokens=config.context_tokens,
                count_tokens=self._count_tokens,
                max_sources=config.max_sources,
            )
            timings["retrieve"] = _ms(mark)
        yield AnswerEvent("sources", sources=tuple(sources))

        mark = time.perf_counter()
        name, writer = answerer
        no_answer = False
        citations: list[Citation]
        if plan.action == "refuse":
            text, citations, no_answer = self._refusal(plan, config, language), [], True
            yield AnswerEvent("delta", delta=text)
        elif not sources:
            text, citations, no_answer = NOTHING_FOUND[language], [], True
            yield AnswerEvent("delta", delta=text)
        else:
            given = AnswerInput(
                question=request.question if not plan.condensed else plan.search_query,
                search_query=plan.search_query,
                sources=sources,
                history=history,
                language=language,
                max_tokens=config.max_answer_tokens,
                repair_citations=config.repair_citations,
            )
            written: list[str] = []
            for delta in writer.stream(given):
                checkpoint()
                written.append(delta)
                yield AnswerEvent("delta", delta=delta)
            text, citations = writer.finish("".join(written), given)
            if not text:
                text, no_answer = NOTHING_FOUND[language], True
                yield AnswerEvent("delta", delta=text)
        timings["answer"] = _ms(mark)

        answer = Answer(
            text=text,
            citations=citations,
            sources=sources,
            plan=plan,
            answerer=name,
            no_answer=no_answer,
            usage={"answer_tokens": self._count_tokens(text)},
        )
        if request.remember:
            self._remember(request, answer)
        timings["total"] = _ms(started)
        answer.timings_ms = timings
        yield AnswerEvent("answer", answer=answer)

    def _answerer(self, config: AnswerConfig) -> tuple[str, Answerer]:
        """The answerer ``config`` names (``auto``: ``llm`` with a chat model, else ``extractive``),
        made once; ConfigError when it is not installed or cannot be made."""
        name = config.answerer
        if name == AUTO:
            name = "llm" if self._chat_model() is not None else "extractive"
        made = self._answerers.get(name)
        if made is None:
            made = self._answerers.setdefault(name, answerers.factory(name)(self._context))
        return name, made

    def _refusal(self, plan: QueryPlan, config: AnswerConfig, language: str) -> str:
        for intent in config.intents:
            if intent.name == plan.intent and intent.reply:
                return intent.reply
        return REFUSAL["zh" if language == "zh" else "en"]

    def _remember(self, request: AskRequest, answer: Answer) -> None:
        conversation_id = request.conversation_id
        if conversation_id is None:
            conversation_id = self._conversations.create(
                request.question, user=request.user, owner=request.owner
            ).id
        cited = answer.cited_sources
        answer.message_id = self._conversations.append_turn(
            conversation_id,
            request.question,
            answer.text,
            answerer=answer.answerer,
            plan=answer.plan.to_dict(),
            resources=[source.to_dict() for source in cited],
            message_id=request.message_id,
        )
        answer.conversation_id = conversation_id


def _within(chosen: Sequence[str] | None, asked: Sequence[str] | None) -> Sequence[str] | None:
    """The datasets to search: those the plan chose (an intent's), kept within those asked (the
    caller's scope; None: all). A plan narrows the scope, never widens it."""
    if chosen is None:
        return asked
    if asked is None:
        return chosen
    allowed = set(asked)
    return [dataset for dataset in chosen if dataset in allowed]


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000.0, 3)
