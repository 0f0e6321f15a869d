"""Summary index: the chat model writes a summary of each segment, indexed beside the segment.

A question phrased at the level of the whole passage ("what does the handbook say about leave")
often matches a summary better than the passage's own words. The summary is one more point of
the segment in every store, mapped back to the segment at search time, so a hit on it returns
the segment (with the summary beside it), never a second result.

Each segment is one call on a bounded thread pool; the chat model retries transient failures
itself. A segment whose call still fails, or whose reply is empty, is served without a summary
and becomes a :class:`ChunkFailure` naming it (``metadata["summary_of"]``), so the document ends
``completed_with_errors`` and a retry summarises only those segments.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import ChildChunk, Segment, content_hash, summary_id
from zhiku.core.errors import ZhikuError
from zhiku.index_processors.base import ChunkFailure
from zhiku.providers.llm import ChatModel
from zhiku.text.language import Language, language_of

#: key of a failure's metadata naming the segment whose summary failed
SUMMARY_OF = "summary_of"

PROMPTS: dict[Language, str] = {
    "en": (
        "Summarise the text below in two or three sentences, so a reader can tell what it is "
        "about and what questions it answers. Use only what the text states. Write in English.\n"
        "Reply with the summary only.\n\n"
        "Text:\n{text}"
    ),
    "zh": (
        "用两三句话概括下面的文本，让读者知道它讲什么、能回答哪些问题。只使用文本中写明的内容，用中文书写。\n"
        "只输出摘要。\n\n"
        "文本：\n{text}"
    ),
}

#: longest summary asked of the model, in its tokens
MAX_SUMMARY_TOKENS = 300


class Summarizer:
    """Writes segments' summaries. ``chat`` is called once, lazily, so a dataset can be configured
    before a model is reachable; ``language`` is ``zh``, ``en`` or None (chosen per segment)."""

    def __init__(
        self, chat: Callable[[], ChatModel], *, language: Language | None = None, max_workers: int = 4
    ) -> None:
        self._chat = chat
        self._language = language
        self._max_workers = max_workers

    def summarize(self, segments: Sequence[Segment]) -> list[ChunkFailure]:
        """Set ``summary`` on each segment the model summarised; the others come back as failures.
        Stops (raising) at a cancelled run's checkpoint, leaving no call queued."""
        if not segments:
            return []
        try:
            chat = self._chat()
        except ZhikuError as exc:
            return [_failure(segment, f"no chat model for summaries: {exc}") for segment in segments]
        failures: list[ChunkFailure] = []
        with ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix="zhiku-summary") as pool:
            futures: list[Future[str | ChunkFailure]] = [
                pool.submit(self._ask, chat, segment) for segment in segments
            ]
            try:
                for segment, future in zip(segments, futures, strict=True):
                    checkpoint()
                    outcome = future.result()
                    if isinstance(outcome, ChunkFailure):
                        failures.append(outcome)
                    else:
                        segment.summary = _summary(segment, outcome)
            except BaseException:
                for future in futures:
                    future.cancel()
                raise
        return failures

    def _ask(self, chat: ChatModel, segment: Segment) -> str | ChunkFailure:
        language = self._language or language_of(segment.content)
        try:
            prompt = PROMPTS[language].format(text=segment.content)
            reply = chat.complete(prompt, max_tokens=MAX_SUMMARY_TOKENS)
        except ZhikuError as exc:
            return _failure(segment, f"the chat model failed: {exc}")
        text = reply.strip()
        if not text:
            return _failure(segment, "the chat model wrote an empty summary")
        return text


def _summary(segment: Segment, text: str) -> ChildChunk:
    return ChildChunk(
        id=summary_id(segment.id, text), position=0, content=text, tokens=0, hash=content_hash(text)
    )


def _failure(segment: Segment, reason: str) -> ChunkFailure:
    return ChunkFailure(
        position=segment.position,
        reason=f"no summary: {reason}",
        content=segment.content,
        metadata={SUMMARY_OF: segment.id},
    )
