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
        """One search per chosen section and per HyDE passage, their hits merged by relevance."""
        semantics: Sequence[str | None] = plan.hypotheses if plan.hyde else (None,)
        sections: Sequence[str | None] = (
            (plan.section,) if plan.section is not None or not plan.sections else plan.sections
        )
        found = [
            retrieve(plan.search_query, datasets=datasets, semantic_query=semantic, section=section).hits
            for section in sections
            for semantic in semantics
        ]
        return found[0] if len(found) == 1 else merged_by_relevance(found)

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


def merged_by_relevance(found: Sequence[Sequence[Hit]]) -> list[Hit]:
    """The hits of several searches as one list: a passage found more than once keeps its best
    relevance, and as many are kept as the longest list held (each search applied the datasets'
    own top-k and threshold)."""
    best: dict[str, Hit] = {}
    for hits in found:
        for hit in hits:
            if hit.segment_id not in best or best[hit.segment_id].score < hit.score:
                best[hit.segment_id] = hit
    top_k = max((len(hits) for hits in found), default=0)
    return sorted(best.values(), key=lambda hit: hit.score, reverse=True)[:top_k]


def token_counter() -> Callable[[str], int]:
    """Counts tiktoken tokens, loading the encoder's ranks (~0.3 s) at the first count: opening a
    knowledge base to search must not pay for what only conversations use."""
    return lambda text: _tiktoken_length()(text)


@cache
def _tiktoken_length() -> TiktokenLength:
    return TiktokenLength()
