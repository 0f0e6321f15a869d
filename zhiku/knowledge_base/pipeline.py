"""Pipeline: extractor → cleaners → splitter → index processor, as plain objects in a row.

A pipeline is built in Python from component objects, or from a :class:`PipelineSpec` — the
JSON-serialisable process rule a dataset stores so later uploads are processed the same way.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from zhiku.cleaners import Cleaner, CleanerChain, build_cleaners
from zhiku.core.documents import Chunk, Document
from zhiku.core.errors import ConfigError
from zhiku.extractors import Extractor, extract
from zhiku.index_processors import IndexProcessor, index_processors
from zhiku.providers.llm import ChatModel
from zhiku.splitters import (
    RecursiveSplitter,
    TextSplitter,
    TiktokenLength,
    TransformersTokenizerLength,
    splitters,
)

Stage = Literal["parsing", "cleaning", "splitting"]


class PipelineSpec(BaseModel):
    """A dataset's process rule.

    ``length`` is ``"cl100k_base"`` (tiktoken, offline), the name of a tokenizer of the setting
    ``tokenizers``, or (Python API) the path of a local transformers tokenizer directory;
    ``max_tokens`` and ``chunk_overlap`` count those tokens.
    """

    model_config = ConfigDict(extra="forbid")

    cleaners: list[str] = Field(default_factory=lambda: ["default", "remove_extra_spaces"])
    splitter: str = "recursive"
    separator: str = "\n\n"
    max_tokens: int = Field(500, ge=16, le=8192)
    chunk_overlap: int = Field(50, ge=0)
    length: str = "cl100k_base"
    doc_form: str = "paragraph"
    doc_language: Literal["zh", "en"] | None = None

    def check_names(self) -> None:
        """ConfigError unless every cleaner and the ``doc_form`` are registered plug-ins."""
        build_cleaners(self.cleaners)
        splitters.factory(self.splitter)
        index_processors.factory(self.doc_form)

    def build(
        self, chat: Callable[[], ChatModel] | None = None, tokenizers: Mapping[str, Path] | None = None
    ) -> Pipeline:
        """The pipeline; ``chat`` gives the chat model a ``qa_model`` dataset needs; ``tokenizers``
        the directories of the tokenizers the operator named (setting ``tokenizers``), so a
        ``length`` naming one of them reads that directory."""
        length = (
            TiktokenLength()
            if self.length == "cl100k_base"
            else TransformersTokenizerLength(Path((tokenizers or {}).get(self.length, self.length)))
        )
        overlap = min(self.chunk_overlap, self.max_tokens // 2)
        factory = splitters.factory(self.splitter)
        options: dict[str, object] = {
            "max_tokens": self.max_tokens,
            "chunk_overlap": overlap,
            "length": length,
        }
        if "separator" in inspect.signature(factory).parameters:  # only splitters that take one
            options["separator"] = self.separator
        splitter = factory(**options)
        return Pipeline(
            cleaners=build_cleaners(self.cleaners),
            splitter=splitter,
            index_processor=self._index_processor(chat),
        )

    def _index_processor(self, chat: Callable[[], ChatModel] | None) -> IndexProcessor:
        if self.doc_form != "qa_model":
            return index_processors.create(self.doc_form)
        if chat is None:
            raise ConfigError(
                "the qa_model index needs a chat model (set ZHIKU_LLM_BASE_URL and ZHIKU_LLM_MODEL)"
            )
        return index_processors.create("qa_model", chat=chat, language=self.doc_language)


def _default_splitter() -> TextSplitter:
    return RecursiveSplitter()


def _default_processor() -> IndexProcessor:
    return index_processors.create("paragraph")


def _default_cleaners() -> list[Cleaner]:
    return build_cleaners(["default", "remove_extra_spaces"])


@dataclass
class Pipeline:
    """Components of one ingestion. ``extractor=None`` picks one by file suffix and content."""

    extractor: Extractor | None = None
    cleaners: Sequence[Cleaner] = field(default_factory=_default_cleaners)
    splitter: TextSplitter = field(default_factory=_default_splitter)
    index_processor: IndexProcessor = field(default_factory=_default_processor)

    def extract(self, source: Path | bytes, name: str) -> list[Document]:
        if self.extractor is not None:
            return self.extractor.extract(source, name=name)
        return extract(source, name)

    def clean(self, documents: list[Document]) -> list[Document]:
        chain = CleanerChain(list(self.cleaners))
        cleaned = [Document(text=chain.clean(doc.text), metadata=doc.metadata) for doc in documents]
        return [doc for doc in cleaned if doc.text.strip()]

    def chunks(
        self,
        source: Path | bytes,
        name: str,
        on_stage: Callable[[Stage], None] | None = None,
        timings: dict[str, float] | None = None,
    ) -> list[Chunk]:
        """Extract, clean and split; ``on_stage`` is told when each stage starts."""
        notify = on_stage or (lambda _stage: None)
        clock = timings if timings is not None else {}
        notify("parsing")
        started = time.perf_counter()
        documents = self.extract(source, name)
        clock["extract"] = clock.get("extract", 0.0) + time.perf_counter() - started
        notify("cleaning")
        started = time.perf_counter()
        documents = self.clean(documents)
        clock["clean"] = clock.get("clean", 0.0) + time.perf_counter() - started
        notify("splitting")
        started = time.perf_counter()
        chunks = self.splitter.split(documents)
        clock["split"] = clock.get("split", 0.0) + time.perf_counter() - started
        return chunks
