"""The answer loop wired to a knowledge base: its retrieval, embedding, chat model and database."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache

from zhiku.answers.assistant import Assistant, DescribeSections
from zhiku.answers.memory import ConversationStore
from zhiku.answers.types import QueryPlan
from zhiku.answers.understanding import QueryUnderstanding
from zhiku.core.config import Settings
from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError
from zhiku.core.plugin_context import PluginContext
from zhiku.providers.embedding import CachedEmbedding
from zhiku.providers.llm import ChatModel
from zhiku.retrieval.types import RetrievalResult
from zhiku.splitters.length import TiktokenLength


def optional_chat(chat_model: Callable[[], ChatModel]) -> Callable[[], ChatModel | None]:
    """The configured chat model, or None when none is configured (offline use)."""

    def get() -> ChatModel | None:
        try:
            return chat_model()
        except ConfigError:
            return None

    return get


def build_assistant(
    *,
    retrieve: Callable[..., RetrievalResult],
    embedding: CachedEmbedding,
    chat_model: Callable[[], ChatModel],
    conversations: ConversationStore,
    describe_sections: DescribeSections,
    settings: Settings,
) -> Assistant:
    def search(plan: QueryPlan, datasets: Sequence[str] | None) -> list[Hit]:
        semantic = plan.semantic_query if plan.hyde else None
        if plan.section is not None or not plan.sections:
            return retrieve(
                plan.search_query, datasets=datasets, semantic_query=semantic, section=plan.section
            ).hits
        return _in_sections(retrieve, plan, datasets, semantic)

    chat = optional_chat(chat_model)
    return Assistant(
        describe_sections=describe_sections,
        retrieve=search,
        understanding=QueryUnderstanding(embedding, chat),
        conversations=conversations,
        chat_model=chat,
        context=PluginContext(settings, chat=chat_model),
        count_tokens=token_counter(),
    )


def _in_sections(
    retrieve: Callable[..., RetrievalResult],
    plan: QueryPlan,
    datasets: Sequence[str] | None,
    semantic: str | None,
) -> list[Hit]:
    """The hits of each chosen section, merged by relevance (each section is searched with the
    datasets' own top-k and threshold; the best top-k of them all are kept)."""
    found: dict[str, Hit] = {}
    top_k = 0
    for section in plan.sections:
        hits = retrieve(plan.search_query, datasets=datasets, semantic_query=semantic, section=section).hits
        top_k = max(top_k, len(hits))
        for hit in hits:
            if hit.segment_id not in found or found[hit.segment_id].score < hit.score:
                found[hit.segment_id] = hit
    return sorted(found.values(), key=lambda hit: hit.score, reverse=True)[:top_k]


def token_counter() -> Callable[[str], int]:
    """Counts tiktoken tokens, loading the encoder's ranks (~0.3 s) at the first count: opening a
    knowledge base to search must not pay for what only conversations use."""
    return lambda text: _tiktoken_length()(text)


@cache
def _tiktoken_length() -> TiktokenLength:
    return TiktokenLength()
