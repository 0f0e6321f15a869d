"""Q&A index ("Q to Q"): an LLM writes question/answer pairs per chunk; questions are indexed.

A user's question is then matched against generated questions (similar in form, so closer than
question-to-passage), and the hit returns the answer. Each chunk is one LLM call on a bounded
thread pool; the chat model retries transient failures itself. A chunk whose call still fails,
or whose reply holds no parsable pair, becomes a :class:`ChunkFailure` — recorded on the
document and retried alone later, never dropped in silence.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Literal

from zhiku.core.documents import Chunk, Segment, content_hash, segment_id
from zhiku.core.errors import ZhikuError
from zhiku.index_processors.base import ChunkFailure, IndexOutcome
from zhiku.index_processors.qa_parsing import QAPair, parse_qa_pairs
from zhiku.providers.llm import ChatModel

logger = logging.getLogger(__name__)

Language = Literal["zh", "en"]

PROMPTS: dict[Language, str] = {
    "en": (
        "Read the text below and write up to {pairs} questions a reader could ask about it, each "
        "with its answer. Use only knowledge stated in the text. Write in English.\n"
        "Reply only with the pairs, in exactly this format:\n"
        "Q1: <question>\nA1: <answer>\n\nQ2: <question>\nA2: <answer>\n\n"
        "Text:\n{text}"
    ),
    "zh": (
        "阅读下面的文本，提出最多 {pairs} 个读者可能会问的问题，并给出答案。"
        "只使用文本中写明的知识，用中文书写。\n"
        "只输出问答对，严格使用以下格式：\n"
        "Q1: <问题>\nA1: <答案>\n\nQ2: <问题>\nA2: <答案>\n\n"
        "文本：\n{text}"
    ),
}

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]+")


def detect_language(text: str) -> Language:
    """Chinese when CJK characters outnumber Latin words, else English."""
    return "zh" if len(_CJK.findall(text)) > len(_LATIN_WORD.findall(text)) else "en"


class QAIndexProcessor:
    """``doc_form="qa_model"``. ``chat`` is called once, lazily, so a dataset can be configured
    before a model is reachable; ``language`` is ``zh``, ``en`` or None (detected per document)."""

    doc_form = "qa_model"

    def __init__(
        self,
        chat: Callable[[], ChatModel],
        *,
        language: Language | None = None,
        pairs_per_chunk: int = 5,
        max_workers: int = 4,
    ) -> None:
        self._chat = chat
        self._language = language
        self._pairs = pairs_per_chunk
        self._max_workers = max_workers

    def transform(self, chunks: Sequence[Chunk], document_id: str) -> IndexOutcome:
        if not chunks:
            return IndexOutcome([])
        language = self._language or detect_language("".join(chunk.content[:500] for chunk in chunks[:20]))
        try:
            chat = self._chat()
        except ZhikuError as exc:
            reason = f"no chat model for Q&A indexing: {exc}"
            return IndexOutcome([], [_failure(chunk, reason) for chunk in chunks])
        with ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix="zhiku-qa") as pool:
            answers = list(pool.map(lambda chunk: self._ask(chat, chunk, language), chunks))
        segments: list[Segment] = []
        failures: list[ChunkFailure] = []
        for chunk, outcome in zip(chunks, answers, strict=True):
            if isinstance(outcome, ChunkFailure):
                failures.append(outcome)
                continue
            for pair_index, pair in enumerate(outcome):
                segments.append(_segment(document_id, len(segments), chunk, pair, pair_index, language))
        return IndexOutcome(segments, failures)

    def _ask(self, chat: ChatModel, chunk: Chunk, language: Language) -> list[QAPair] | ChunkFailure:
        prompt = PROMPTS[language].format(pairs=self._pairs, text=chunk.content)
        try:
            reply = chat.complete(prompt)
        except ZhikuError as exc:
            return _failure(chunk, f"the chat model failed: {exc}")
        parsed = parse_qa_pairs(reply)
        if parsed.problems:
            logger.warning("chunk %s: %s", chunk.position, "; ".join(parsed.problems))
        if not parsed.pairs:
            excerpt = reply.strip().replace("\n", " ")[:200]
            return _failure(chunk, f"no question/answer pair in the model's reply: {excerpt!r}")
        return parsed.pairs


def renumber(segments: Sequence[Segment], document_id: str) -> list[Segment]:
    """Segments ordered by source chunk and pair, positions (and so ids) made consecutive again —
    after a retry added pairs for chunks in the middle of a document."""
    ordered = sorted(
        segments, key=lambda s: (s.metadata.get("chunk_position", 0), s.metadata.get("pair_index", 0))
    )
    result = []
    for position, segment in enumerate(ordered):
        content = segment.content
        result.append(
            Segment(
                id=segment_id(document_id, position, content),
                document_id=document_id,
                position=position,
                content=content,
                tokens=segment.tokens,
                hash=segment.hash,
                keywords=list(segment.keywords),
                answer=segment.answer,
                enabled=segment.enabled,
                metadata=dict(segment.metadata),
            )
        )
    return result


def _segment(
    document_id: str, position: int, chunk: Chunk, pair: QAPair, pair_index: int, language: Language
) -> Segment:
    return Segment(
        id=segment_id(document_id, position, pair.question),
        document_id=document_id,
        position=position,
        content=pair.question,
        tokens=0,
        hash=content_hash(pair.question),
        answer=pair.answer,
        metadata={
            **chunk.metadata,
            "chunk_position": chunk.position,
            "pair_index": pair_index,
            "language": language,
        },
    )


def _failure(chunk: Chunk, reason: str) -> ChunkFailure:
    return ChunkFailure(
        position=chunk.position, reason=reason, content=chunk.content, metadata=dict(chunk.metadata)
    )
