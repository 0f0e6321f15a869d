"""Query understanding: condense a follow-up, classify its intent, write a HyDE passage.

Each step is optional, never fatal (a model failure falls back and says so in the plan's notes),
and visible in the :class:`QueryPlan`: what was asked, what was searched, and why.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import numpy as np

from zhiku.answers.config import AnswerConfig, Intent
from zhiku.answers.memory import Turn
from zhiku.answers.prompts import CONDENSE, HYDE, INTENT, language_of
from zhiku.answers.types import QueryPlan
from zhiku.core.errors import ModelUnavailable
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.llm import ChatModel, Tool

logger = logging.getLogger(__name__)

#: Tokens a condensed question or a HyDE passage may take.
CONDENSE_MAX_TOKENS = 200
HYDE_MAX_TOKENS = 300
#: A condensed question longer than this many characters is not a question: the model answered
#: or rambled, and the offline fallback is used instead.
MAX_CONDENSED_CHARS = 500

ChatSource = Callable[[], ChatModel | None]


class QueryUnderstanding:
    """``chat`` returns the chat model, or None when none is configured (steps that need one
    then use their offline fallback or are skipped, with a note)."""

    def __init__(self, embedding: CachedEmbedding, chat: ChatSource) -> None:
        self._embedding = embedding
        self._chat = chat
        self._intent_vectors: dict[tuple[str, ...], np.ndarray] = {}

    def plan(self, question: str, history: Sequence[Turn], config: AnswerConfig) -> QueryPlan:
        notes: list[str] = []
        query, condensed = question, False
        if config.condense and history:
            query = self._condense(question, history, notes)
            condensed = query != question
        intent = self._classify(query, config, notes) if config.intents else None
        datasets = intent.datasets if intent is not None else None
        action = intent.action if intent is not None else "answer"
        semantic, hyde = query, False
        if config.hyde and action == "answer":
            passage = self._hyde(query, notes)
            if passage:
                semantic, hyde = passage, True
        return QueryPlan(
            question=question,
            search_query=query,
            semantic_query=semantic,
            condensed=condensed,
            hyde=hyde,
            intent=intent.name if intent is not None else None,
            action=action,
            datasets=datasets,
            section=intent.section if intent is not None else None,
            notes=tuple(notes),
        )

    # -- condense ------------------------------------------------------------------------------

    def _condense(self, question: str, history: Sequence[Turn], notes: list[str]) -> str:
        chat = self._chat()
        if chat is not None:
            language = language_of(question)
            transcript = "\n".join(
                f"{'用户' if language == 'zh' else 'User'}: {turn.question}\n"
                f"{'助手' if language == 'zh' else 'Assistant'}: {turn.answer}"
                for turn in history
            )
            follow_up = "追问" if language == "zh" else "Follow-up"
            try:
                rewritten = chat.complete(
                    f"{transcript}\n\n{follow_up}: {question}",
                    system=CONDENSE[language],
                    max_tokens=CONDENSE_MAX_TOKENS,
                ).strip()
            except ModelUnavailable as exc:
                notes.append(f"condense: the chat model failed ({exc}); the previous question was prepended")
            else:
                if rewritten and len(rewritten) <= MAX_CONDENSED_CHARS:
                    return rewritten
                notes.append(
                    "condense: the chat model's rewrite was unusable; the previous question was prepended"
                )
        return f"{history[-1].question} {question}"

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

    def _hyde(self, query: str, notes: list[str]) -> str:
        chat = self._chat()
        if chat is None:
            notes.append("hyde: no chat model configured; the query drives semantic search")
            return ""
        try:
            passage = chat.complete(
                query, system=HYDE[language_of(query)], max_tokens=HYDE_MAX_TOKENS
            ).strip()
        except ModelUnavailable as exc:
            notes.append(f"hyde: the chat model failed ({exc}); the query drives semantic search")
            return ""
        return passage


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
