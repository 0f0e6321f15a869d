"""The answer loop: question → plan → retrieval → numbered sources → cited answer → memory.

:meth:`Assistant.events` is the one implementation; :meth:`Assistant.ask` collects its events into
an :class:`Answer`. Either way the sources are fixed before the answerer starts, so a streamed
``[n]`` means the same source as in the final answer.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from zhiku.answers.agent import AgentLoop, AgentRun
from zhiku.answers.answerers import AUTO, Answerer, AnswerInput, answerers
from zhiku.answers.citations import finish
from zhiku.answers.config import AnswerConfig, Intent
from zhiku.answers.generation import with_style
from zhiku.answers.memory import ConversationStore, Turn
from zhiku.answers.prompts import (
    GENERAL_ANSWER,
    NOT_FROM_KNOWLEDGE_BASE,
    NOTHING_FOUND,
    REFUSAL,
)
from zhiku.answers.sources import Source, assemble_sources
from zhiku.answers.types import AgentStep, Answer, AnswerEvent, Citation, QueryPlan
from zhiku.answers.understanding import QueryUnderstanding, SectionChoice
from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError
from zhiku.core.plugin_context import PluginContext
from zhiku.providers.llm import ChatModel
from zhiku.text.language import Language, language_of

#: Retrieval as the assistant sees it: the plan and the datasets asked (None: all) → hits.
Retrieve = Callable[[QueryPlan, Sequence[str] | None], list[Hit]]
#: The described sections of the datasets asked (None: all), for understanding to choose from.
DescribeSections = Callable[[Sequence[str] | None], list[SectionChoice]]


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
        describe_sections: DescribeSections = lambda datasets: [],
    ) -> None:
        """``chat_model``: the chat model, None when none is configured (``auto`` answers
        without); ``context``: what answerers are made from (``answerers`` registry);
        ``describe_sections``: the described sections understanding may choose among."""
        self._describe_sections = describe_sections
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
        answerer = self._agent_model(config) if config.mode == "agent" else self._answerer(config)
        history: list[Turn] = list(request.history or [])
        if request.conversation_id is not None:
            self._conversations.get(request.conversation_id, user=request.user or None, owner=request.owner)
            history = self._conversations.history(request.conversation_id, max_tokens=config.history_tokens)
        return self._run(request, config, answerer, history, started, timings)

    def _run(
        self,
        request: AskRequest,
        config: AnswerConfig,
        answerer: tuple[str, Answerer] | ChatModel,
        history: list[Turn],
        started: float,
        timings: dict[str, float],
    ) -> Iterator[AnswerEvent]:
        if isinstance(answerer, ChatModel):  # agent mode
            yield from self._agent(request, config, answerer, history, started)
            return
        mark = time.perf_counter()
        understands = config.condense and self._chat_model() is not None
        sections = self._describe_sections(request.datasets) if understands else []
        plan = self._understanding.plan(request.question, history, config, sections)
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
        chat = self._chat_model() if plan.action == "chat" else None
        no_answer, grounded = False, True
        citations: list[Citation]
        if chat is not None:  # the chat action, with a model to answer alone
            grounded, citations = False, []
            pieces: list[str] = []
            style = intent.style if (intent := _intent_of(plan, config)) is not None else None
            for delta in self._general_answer(chat, request.question, history, language, config, style):
                pieces.append(delta)
                yield AnswerEvent("delta", delta=delta)
            text = "".join(pieces)
        elif plan.action != "answer":  # refuse, or chat with no model to answer alone
            text, citations, no_answer = self._refusal(plan, config, language), [], True
            yield AnswerEvent("delta", delta=text)
        elif not sources:
            text, citations, no_answer = NOTHING_FOUND[language], [], True
            yield AnswerEvent("delta", delta=text)
        else:
            given = AnswerInput(
                # a follow-up folded offline into the questions before it is no standalone question:
                # the answer is for the question as asked (the folded text is what was searched)
                question=plan.search_query if plan.condensed and not plan.folded else request.question,
                search_query=plan.search_query,
                sources=sources,
                history=history,
                language=language,
                max_tokens=config.max_answer_tokens,
                repair_citations=config.repair_citations,
                style=intent.style if (intent := _intent_of(plan, config)) is not None else None,
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
            grounded=grounded,
            usage={"answer_tokens": self._count_tokens(text)},
        )
        if request.remember:
            self._remember(request, answer)
        timings["total"] = _ms(started)
        answer.timings_ms = timings
        yield AnswerEvent("answer", answer=answer)

    def _agent(
        self,
        request: AskRequest,
        config: AnswerConfig,
        chat: ChatModel,
        history: list[Turn],
        started: float,
    ) -> Iterator[AnswerEvent]:
        """Agent mode (:mod:`zhiku.answers.agent`): the model searches as it sees fit, each search
        streamed as a ``step``; the answer cites the passages it read, checked like any other."""
        language = language_of(request.question)
        plan = QueryPlan(request.question, request.question, request.question, notes=("mode: agent",))
        yield AnswerEvent("plan", plan=plan)

        def search(query: str) -> list[Hit]:
            return self._retrieve(QueryPlan(query, query, query), request.datasets)

        loop = AgentLoop(chat, search, config, self._count_tokens, language)
        turns = [
            message
            for turn in history
            for message in (
                {"role": "user", "content": turn.question},
                {"role": "assistant", "content": turn.answer},
            )
        ]
        run = AgentRun()
        for item in loop.run(request.question, turns):
            if isinstance(item, AgentStep):
                yield AnswerEvent("step", step=item)
            else:
                run = item
        yield AnswerEvent("sources", sources=tuple(run.sources))
        text, citations = finish(run.text, run.sources, repair_uncited=config.repair_citations)
        no_answer = not text.strip()
        if no_answer:
            text = NOTHING_FOUND[language]
        grounded = bool(citations) or no_answer
        if not grounded:  # answered without citing anything it read: say where it came from
            text = f"{text}\n\n{NOT_FROM_KNOWLEDGE_BASE[language]}"
        yield AnswerEvent("delta", delta=text)
        searches = sum(1 for step in run.steps if step.error is None)
        notes = (*plan.notes, f"agent: {searches} searches, stopped: {run.stopped}")
        answer = Answer(
            text=text,
            citations=citations,
            sources=run.sources,
            plan=dataclasses.replace(plan, notes=notes),
            answerer="agent",
            no_answer=no_answer,
            grounded=grounded,
            steps=run.steps,
            usage={"answer_tokens": self._count_tokens(text)},
        )
        if request.remember:
            self._remember(request, answer)
        answer.timings_ms = {"total": _ms(started)}
        yield AnswerEvent("answer", answer=answer)

    def _agent_model(self, config: AnswerConfig) -> ChatModel:
        """Agent mode's chat model; ConfigError when none is configured or the extractive
        answerer is asked for (agent mode is the chat model's)."""
        chat = self._chat_model() if config.answerer in (AUTO, "llm") else None
        if chat is None:
            raise ConfigError(
                "agent mode needs a chat model (ZHIKU_LLM_BASE_URL and ZHIKU_LLM_MODEL) "
                "and the answerer 'auto' or 'llm'"
            )
        return chat

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

    def _general_answer(
        self,
        chat: ChatModel,
        question: str,
        history: Sequence[Turn],
        language: Language,
        config: AnswerConfig,
        style: str | None,
    ) -> Iterator[str]:
        """The chat model alone, then the label saying so (part of the answer text, so every client
        shows it)."""
        messages: list[dict[str, str]] = [
            {"role": "system", "content": with_style(GENERAL_ANSWER[language], style)}
        ]
        for turn in history:
            messages.append({"role": "user", "content": turn.question})
            messages.append({"role": "assistant", "content": turn.answer})
        messages.append({"role": "user", "content": question})
        for delta in chat.stream(messages, max_tokens=config.max_answer_tokens):
            checkpoint()
            yield delta
        yield f"\n\n{NOT_FROM_KNOWLEDGE_BASE[language]}"

    def _refusal(self, plan: QueryPlan, config: AnswerConfig, language: str) -> str:
        intent = _intent_of(plan, config)
        if intent is not None and intent.reply:
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


def _intent_of(plan: QueryPlan, config: AnswerConfig) -> Intent | None:
    """The intent the plan chose, as configured."""
    return next((intent for intent in config.intents if intent.name == plan.intent), None)
