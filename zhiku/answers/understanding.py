"""Query understanding: make a follow-up searchable, classify its intent, write a HyDE passage.

Each step is optional, never fatal (a model failure falls back and says so in the plan's notes),
and visible in the :class:`QueryPlan`: what was asked, what was searched, and why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from zhiku.answers.config import AnswerConfig, Intent
from zhiku.answers.follow_up import fold
from zhiku.answers.memory import Turn
from zhiku.answers.prompts import HYDE, HYDE_AS, HYDE_KINDS, INTENT, UNDERSTAND
from zhiku.answers.types import QueryPlan
from zhiku.core.errors import ModelUnavailable
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.llm import ChatModel, Tool
from zhiku.text.language import language_of
from zhiku.text.tokenizer import Tokenizer

logger = logging.getLogger(__name__)

#: Tokens the understanding call or a HyDE passage may take.
CONDENSE_MAX_TOKENS = 200
HYDE_MAX_TOKENS = 300
#: A rewritten query longer than this many characters is not a question: the model answered or
#: rambled, and the offline fallback is used instead.
MAX_CONDENSED_CHARS = 500

ChatSource = Callable[[], ChatModel | None]
UNDERSTAND_TOOL = "understand"
#: Described sections offered to the chat model at most (the prompt stays bounded).
MAX_SECTION_CHOICES = 50


@dataclass(frozen=True)
class SectionChoice:
    """A section the chat model may pick: its heading path and what its description says."""

    name: str
    description: str


class QueryUnderstanding:
    """``chat`` returns the chat model, or None when none is configured (steps that need one
    then use their offline fallback or are skipped, with a note)."""

    def __init__(
        self, embedding: CachedEmbedding, chat: ChatSource, tokenizer: Tokenizer | None = None
    ) -> None:
        self._embedding = embedding
        self._chat = chat
        self._tokenizer = tokenizer or Tokenizer()
        self._intent_vectors: dict[tuple[str, ...], np.ndarray] = {}

    def plan(
        self,
        question: str,
        history: Sequence[Turn],
        config: AnswerConfig,
        sections: Sequence[SectionChoice] = (),
    ) -> QueryPlan:
        """``sections`` are the described sections of the datasets asked, for the chat model to
        choose from."""
        notes: list[str] = []
        understood = self._understand(question, history, config, sections, notes)
        folded = False
        if understood is not None:
            query, chosen_intent, chosen_sections, retrieve = understood
        else:
            query, chosen_intent, chosen_sections, retrieve = question, None, (), True
            if config.condense and history:
                query = self._fold(question, history, notes)
                folded = query != question
        intent = None
        if config.intents:
            intent = chosen_intent or self._classify(query, config, notes)
        action = intent.action if intent is not None else "answer"
        if action == "answer" and not retrieve:
            if config.general_answers:
                action = "chat"
            else:
                notes.append("retrieve: the chat model saw no need to search; searched anyway")
        hypotheses: list[str] = []
        if config.hyde and action == "answer":
            hypotheses = self._hyde(query, config.hyde_hypotheses, notes)
        return QueryPlan(
            question=question,
            search_query=query,
            semantic_query=hypotheses[0] if hypotheses else query,
            condensed=query != question,
            folded=folded,
            hyde=bool(hypotheses),
            hypotheses=tuple(hypotheses),
            intent=intent.name if intent is not None else None,
            action=action,
            datasets=intent.datasets if intent is not None else None,
            section=intent.section if intent is not None else None,
            sections=chosen_sections if intent is None or intent.section is None else (),
            notes=tuple(notes),
        )

    # -- understand (the chat model, one call) ------------------------------------------------

    def _understand(
        self,
        question: str,
        history: Sequence[Turn],
        config: AnswerConfig,
        sections: Sequence[SectionChoice],
        notes: list[str],
    ) -> tuple[str, Intent | None, tuple[str, ...], bool] | None:
        """(query, intent, sections, retrieve) from one structured call, or None when there is
        no chat model, understanding is off, or the model failed (said in ``notes``)."""
        if not config.condense:
            return None
        chat = self._chat()
        if chat is None:
            return None
        intents = config.intents if config.intent_classifier == "llm" and len(config.intents) > 1 else ()
        language = language_of(question)
        try:
            result = chat.chat(
                [
                    {"role": "system", "content": UNDERSTAND[language]},
                    {"role": "user", "content": _understanding_prompt(question, history, intents, sections)},
                ],
                tools=[_understand_tool(intents, sections)],
                tool_choice=UNDERSTAND_TOOL,
                max_tokens=CONDENSE_MAX_TOKENS,
            )
        except ModelUnavailable as exc:
            notes.append(f"understand: the chat model failed ({exc}); understood offline")
            return None
        arguments = next((c.arguments for c in result.tool_calls if c.name == UNDERSTAND_TOOL), None)
        if arguments is None:  # the tool was required: text instead is an answer, not a reading
            notes.append("understand: the chat model did not call the tool; understood offline")
            return None
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_CONDENSED_CHARS:
            notes.append("understand: the chat model gave no usable query; understood offline")
            return None
        by_name = {intent.name: intent for intent in intents}
        intent = by_name.get(str(arguments.get("intent")))
        if intents and intent is None:
            notes.append("intent: the chat model named no listed intent; classified by embedding")
        known = {choice.name for choice in sections}
        picked = arguments.get("sections")
        chosen = tuple(dict.fromkeys(p for p in picked if p in known)) if isinstance(picked, list) else ()
        return query.strip(), intent, chosen, arguments.get("retrieve") is not False

    def _fold(self, question: str, history: Sequence[Turn], notes: list[str]) -> str:
        """Offline: the follow-up folded into the earlier questions only when it depends on
        them (:mod:`zhiku.answers.follow_up`)."""
        query, reason = fold(question, [turn.question for turn in history], self._tokenizer)
        if reason is None:
            notes.append("follow-up: it names its own subject; searched alone")
        else:
            notes.append(f"follow-up: {reason}; searched with the question before it")
        return query

    # -- intent --------------------------------------------------------------------------------

    def _classify(self, query: str, config: AnswerConfig, notes: list[str]) -> Intent:
        intents = config.intents
        if len(intents) == 1:
            return intents[0]
        if config.intent_classifier == "llm":
            chat = self._chat()
            if chat is None:
                notes.append("intent: no chat model configured; classified by embedding")
            else:
                try:
                    chosen = _ask_intent(chat, query, intents)
                except ModelUnavailable as exc:
                    notes.append(f"intent: the chat model failed ({exc}); classified by embedding")
                else:
                    if chosen is not None:
                        return chosen
                    notes.append("intent: the chat model named no intent; classified by embedding")
        return self._nearest_intent(query, intents)

    def _nearest_intent(self, query: str, intents: Sequence[Intent]) -> Intent:
        """The intent whose description or examples lie closest to the query (best cosine)."""
        texts: list[str] = []
        owners: list[int] = []
        for i, intent in enumerate(intents):
            for text in (f"{intent.name}: {intent.description}", *intent.examples):
                texts.append(text)
                owners.append(i)
        key = tuple(texts)
        vectors = self._intent_vectors.get(key)
        if vectors is None:
            vectors = self._embedding.embed_documents(texts)
            if len(self._intent_vectors) > 64:  # configurations change rarely; keep it bounded
                self._intent_vectors.clear()
            self._intent_vectors[key] = vectors
        similarities = vectors @ self._embedding.embed_query(query)
        best = np.full(len(intents), -np.inf)
        for owner, similarity in zip(owners, similarities, strict=True):
            best[owner] = max(best[owner], float(similarity))
        return intents[int(np.argmax(best))]

    # -- HyDE ----------------------------------------------------------------------------------

    def _hyde(self, query: str, count: int, notes: list[str]) -> list[str]:
        """Up to ``count`` hypothetical passages, the first plain and each other one written as
        another kind of document; none when there is no chat model or it fails first."""
        chat = self._chat()
        if chat is None:
            notes.append("hyde: no chat model configured; the query drives semantic search")
            return []
        language = language_of(query)
        passages: list[str] = []
        for kind in (None, *HYDE_KINDS[language])[:count]:
            prompt = query if kind is None else f"{HYDE_AS[language]}{kind}\n\n{query}"
            try:
                passage = chat.complete(prompt, system=HYDE[language], max_tokens=HYDE_MAX_TOKENS).strip()
            except ModelUnavailable as exc:
                notes.append(f"hyde: the chat model failed ({exc}); {len(passages)} passage(s) written")
                break
            if passage and passage not in passages:
                passages.append(passage)
        if not passages:
            notes.append("hyde: no passage written; the query drives semantic search")
        elif count > 1:
            notes.append(f"hyde: {len(passages)} passages, each searched; hits merged by relevance")
        return passages


def _understanding_prompt(
    question: str, history: Sequence[Turn], intents: Sequence[Intent], sections: Sequence[SectionChoice]
) -> str:
    zh = language_of(question) == "zh"
    parts: list[str] = []
    if history:
        user, assistant = ("用户", "助手") if zh else ("User", "Assistant")
        parts.append(
            ("对话：\n" if zh else "Conversation:\n")
            + "\n".join(f"{user}: {turn.question}\n{assistant}: {turn.answer}" for turn in history)
        )
    if intents:
        parts.append(
            ("类别：\n" if zh else "Categories:\n")
            + "\n".join(f"- {intent.name}: {intent.description}" for intent in intents)
        )
    if sections:
        parts.append(
            ("章节：\n" if zh else "Sections:\n")
            + "\n".join(f"- {choice.name}: {choice.description}" for choice in sections[:MAX_SECTION_CHOICES])
        )
    parts.append(f"{'问题' if zh else 'Question'}: {question}")
    return "\n\n".join(parts)


def _understand_tool(intents: Sequence[Intent], sections: Sequence[SectionChoice]) -> Tool:
    properties: dict[str, Any] = {
        "query": {"type": "string", "description": "the standalone question to search for"},
        "retrieve": {"type": "boolean", "description": "whether the knowledge base must be searched"},
    }
    if intents:
        properties["intent"] = {"type": "string", "enum": [intent.name for intent in intents]}
    if sections:
        names = [choice.name for choice in sections[:MAX_SECTION_CHOICES]]
        properties["sections"] = {"type": "array", "items": {"type": "string", "enum": names}}
    return Tool(
        name=UNDERSTAND_TOOL,
        description="Report the search query, intent, sections and whether to search.",
        parameters={"type": "object", "properties": properties, "required": ["query", "retrieve"]},
    )


def _ask_intent(chat: ChatModel, query: str, intents: Sequence[Intent]) -> Intent | None:
    tools = [
        Tool(
            name=f"intent_{i}",
            description=f"{intent.name}: {intent.description}",
            parameters={"type": "object", "properties": {}},
        )
        for i, intent in enumerate(intents)
    ]
    result = chat.chat(
        [{"role": "system", "content": INTENT[language_of(query)]}, {"role": "user", "content": query}],
        tools=tools,
        tool_choice="required",
    )
    for call in result.tool_calls:
        if call.name.startswith("intent_") and call.name[7:].isdigit() and int(call.name[7:]) < len(intents):
            return intents[int(call.name[7:])]
        for intent in intents:
            if call.name == intent.name:
                return intent
    return None
