"""Pipeline: extractor → cleaners → splitter → index processor, as plain objects in a row.

A pipeline is built in Python from component objects, or from a :class:`PipelineSpec` — the
JSON-serialisable process rule a dataset stores so later uploads are processed the same way.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from zhiku.cleaners import Cleaner, CleanerChain, build_cleaners
from zhiku.core.config import Settings
from zhiku.core.documents import Chunk, Document
from zhiku.core.errors import ConfigError
from zhiku.core.plugin_context import PluginContext
from zhiku.extractors import Extractor
from zhiku.extractors.parse_process import extract_document
from zhiku.index_processors import IndexProcessor, ParagraphIndexProcessor, index_processors
from zhiku.index_processors.parent_child import DEFAULT_CHILD_MAX_TOKENS
from zhiku.index_processors.summary import Summarizer
from zhiku.providers.llm import ChatModel
from zhiku.splitters import (
    LengthFunction,
    RecursiveSplitter,
    TextSplitter,
    TiktokenLength,
    TransformersTokenizerLength,
    splitters,
)
from zhiku.splitters.whole_document import WholeDocumentSplitter

Stage = Literal["parsing", "cleaning", "splitting"]


#: Each overlap field of a process rule and the chunk size it must stay below.
OVERLAP_SIZES = {"chunk_overlap": "max_tokens", "child_chunk_overlap": "child_max_tokens"}


class PipelineSpec(BaseModel):
    """A dataset's process rule.

    ``length`` is ``"cl100k_base"`` (tiktoken, offline), the name of a tokenizer of the setting
    ``tokenizers``, or (Python API) the path of a local transformers tokenizer directory;
    ``max_tokens`` and ``chunk_overlap`` count those tokens.

    Parent-child (``doc_form="hierarchical_model"``): the splitter fields cut the parents
    (``parent_mode="paragraph"``) or each file is one parent of up to 10,000 tokens
    (``"full-doc"``); the ``child_*`` fields cut each parent into the children that get indexed.

    ``summary="llm"`` (summary index): the chat model writes a summary of each segment, indexed
    beside it (not for ``qa_model``, whose segments are already written by the model).
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
    parent_mode: Literal["paragraph", "full-doc"] = "paragraph"
    child_splitter: str = "recursive"
    child_separator: str = "\n"
    child_max_tokens: int = Field(DEFAULT_CHILD_MAX_TOKENS, ge=16, le=8192)
    child_chunk_overlap: int = Field(0, ge=0)
    summary: Literal["off", "llm"] = "off"

    @model_validator(mode="after")
    def _summary_of_text(self) -> PipelineSpec:
        if self.summary == "llm" and self.doc_form == "qa_model":
            raise ValueError(
                "summary: 'llm' needs segments of text; a qa_model index has generated questions"
            )
        return self

    def overlap_problem(self, given: Iterable[str]) -> tuple[str, str] | None:
        """``(field, why)`` for the first overlap among ``given`` (``chunk_overlap``,
        ``child_chunk_overlap``) that is not smaller than its chunk's ``max_tokens``; else None.

        Only overlaps a caller set are checked: an overlap of a whole chunk or more cannot be
        honoured (the splitter keeps at most half a chunk), so asking for one is an error, while
        a rule's own default over a small ``max_tokens`` is clamped when the splitter is built,
        as it always was (rules stored before this check keep working)."""
        for name in given:
            size_field = OVERLAP_SIZES.get(name)
            if size_field is None:
                continue
            overlap, size = getattr(self, name), getattr(self, size_field)
            if overlap >= size:
                return name, f"{overlap} must be smaller than {size_field} ({size})"
        return None

    def check_names(self) -> None:
        """ConfigError unless every cleaner and the ``doc_form`` are registered plug-ins."""
        build_cleaners(self.cleaners)
        splitters.check(self.splitter, "splitter")
        index_processors.check(self.doc_form, "doc_form")
        splitters.check(self.child_splitter, "child_splitter")

    def build(
        self, chat: Callable[[], ChatModel] | None = None, settings: Settings | None = None
    ) -> Pipeline:
        """The pipeline; ``chat`` gives the chat model a ``qa_model`` dataset needs; ``settings``
        the tokenizers the operator named (setting ``tokenizers``), so a ``length`` naming one of
        them reads that directory, and what plug-ins read from the settings."""
        settings = settings or Settings()
        length = (
            TiktokenLength()
            if self.length == "cl100k_base"
            else TransformersTokenizerLength(Path(settings.tokenizers.get(self.length, self.length)))
        )
        hierarchical = self.doc_form == "hierarchical_model"
        splitter: TextSplitter = (
            WholeDocumentSplitter(length=length)
            if hierarchical and self.parent_mode == "full-doc"
            else _splitter(self.splitter, self.max_tokens, self.chunk_overlap, self.separator, length)
        )
        context = PluginContext(
            settings,
            chat=chat,
            length=length,
            child_splitter=self.child_splitter_of(length),
            language=self.doc_language,
        )
        return Pipeline(
            cleaners=build_cleaners(self.cleaners),
            splitter=splitter,
            index_processor=index_processors.factory(self.doc_form)(context),
            summarizer=self._summarizer(chat),
        )

    def _summarizer(self, chat: Callable[[], ChatModel] | None) -> Summarizer | None:
        if self.summary == "off":
            return None
        if chat is None:
            raise ConfigError(
                "the summary index needs a chat model (set ZHIKU_LLM_BASE_URL and ZHIKU_LLM_MODEL)"
            )
        return Summarizer(chat, language=self.doc_language)

    def child_splitter_of(self, length: LengthFunction) -> TextSplitter:
        """The splitter that cuts a parent into its children (also when a parent is edited)."""
        return _splitter(
            self.child_splitter, self.child_max_tokens, self.child_chunk_overlap, self.child_separator, length
        )

def _splitter(
    name: str, max_tokens: int, overlap: int, separator: str, length: LengthFunction
) -> TextSplitter:
    return splitters.factory(name)(
        max_tokens=max_tokens, chunk_overlap=min(overlap, max_tokens // 2), separator=separator, length=length
    )


def _default_splitter() -> TextSplitter:
    return RecursiveSplitter()


def _default_processor() -> IndexProcessor:
    return ParagraphIndexProcessor()


def _default_cleaners() -> list[Cleaner]:
    return build_cleaners(["default", "remove_extra_spaces"])


@dataclass
class Pipeline:
    """Components of one ingestion. ``extractor=None`` picks one by file suffix and content."""

    extractor: Extractor | None = None
    cleaners: Sequence[Cleaner] = field(default_factory=_default_cleaners)
    splitter: TextSplitter = field(default_factory=_default_splitter)
    index_processor: IndexProcessor = field(default_factory=_default_processor)
    #: writes the segments' summaries (summary index), or None
    summarizer: Summarizer | None = None

    def extract(self, source: Path | bytes, name: str) -> list[Document]:
        if self.extractor is not None:
            return self.extractor.extract(source, name=name)
        return extract_document(source, name)

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
