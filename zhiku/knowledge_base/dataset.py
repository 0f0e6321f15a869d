"""Dataset: the public facade of one dataset — documents, segments, Q&A pairs and search.

It holds an id and a :class:`DatasetContext`, and hands each call to the part whose job it is:
its settings (:mod:`.dataset_settings`), its document and segment rows (:mod:`.dataset_documents`,
:mod:`.dataset_segments`), ingestion (:mod:`.document_intake`, :mod:`.folder_sync`), its sections,
metadata and stores. A method that is a collaborator's own is declared :class:`Delegated`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

from zhiku.core.delegation import Delegated
from zhiku.core.documents import Hit
from zhiku.core.metadata import MetadataFilter
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.core.scope import DocumentScope
from zhiku.knowledge_base.automatic_filter import AutomaticFilterResult, automatic_filter
from zhiku.knowledge_base.catalog import Catalog
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.dataset_documents import DatasetDocuments
from zhiku.knowledge_base.dataset_segments import DatasetSegments
from zhiku.knowledge_base.dataset_settings import DatasetSettings
from zhiku.knowledge_base.document_intake import DocumentIntake
from zhiku.knowledge_base.folder_sync import FolderSync
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.indexing.segments import SegmentEditor
from zhiku.knowledge_base.metadata import DatasetMetadata
from zhiku.knowledge_base.sections import DatasetSections, SectionInfo
from zhiku.retrieval.calibration_files import calibration_for
from zhiku.retrieval.relevance import Calibration


class Dataset:
    """One dataset: its documents, segments and search. Cheap to create; state lives in the DB."""

    def __init__(self, context: DatasetContext, dataset_id: str) -> None:
        self._context = context
        self.id = dataset_id
        index = functools.partial(context.index, dataset_id)
        self._settings = DatasetSettings(context, dataset_id)
        self._documents = DatasetDocuments(context.sessions, dataset_id, index)
        self._segments = DatasetSegments(context.sessions, dataset_id, index)
        self._intake = DocumentIntake(context, self._documents, self._segments, self._settings.pipeline)
        self._folders = FolderSync(self._documents, self._intake)
        self._sections = DatasetSections(context.sessions, dataset_id)

    def __repr__(self) -> str:
        return f"Dataset(id={self.id!r}, name={self.name!r})"

    # -- settings -------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._settings.name

    @property
    def description(self) -> str:
        return self._settings.description

    @property
    def retrieval(self) -> RetrievalConfig:
        return self._settings.retrieval

    @property
    def process_rule(self) -> PipelineSpec:
        return self._settings.process_rule

    @property
    def embedding_model(self) -> str:
        return self._settings.embedding_model

    @property
    def embedding_options(self) -> dict[str, Any]:
        """The options its embedding model was created with (a directory, an endpoint)."""
        return self._settings.embedding_options

    @property
    def tokenizer_settings(self) -> dict[str, Any]:
        """How its text was cut for BM25 and keywords (fixed at creation): ``stemmer``,
        ``han_bigrams``, ``user_dict``, ``stop_words``, ``keyword_count`` where set."""
        return self._settings.tokenizer_settings

    update = Delegated("_settings", DatasetSettings.update)

    pipeline = Delegated("_settings", DatasetSettings.pipeline)
    chat_model = Delegated("_settings", DatasetSettings.chat_model)

    # -- documents and segments -----------------------------------------------------------------

    stats = Delegated("_documents", DatasetDocuments.stats)
    documents = Delegated("_documents", DatasetDocuments.all)
    document = Delegated("_documents", DatasetDocuments.get)
    segments = Delegated("_segments", DatasetSegments.all)
    delete_document = Delegated("_documents", DatasetDocuments.delete)
    set_documents_enabled = Delegated("_documents", DatasetDocuments.set_enabled)
    set_segments_enabled = Delegated("_segments", DatasetSegments.set_enabled)

    def word_counts(self, document_ids: Sequence[str]) -> dict[str, int]:
        """Characters of segment text per document (what Dify calls its word count)."""
        return Catalog(self._context.sessions).document_words(document_ids)

    def set_segment_enabled(self, segment_id: str, enabled: bool) -> None:
        """Enable or disable one segment in the database and in both stores."""
        self.set_segments_enabled([segment_id], enabled)

    # -- ingest, queued indexing (the HTTP API's indexing workers) and segment editing ----------

    add_file = Delegated("_intake", DocumentIntake.add_file)
    add_text = Delegated("_intake", DocumentIntake.add_text)
    add_files = Delegated("_intake", DocumentIntake.add_files)
    replace_file = Delegated("_intake", DocumentIntake.replace_file)
    sync_folder = Delegated("_folders", FolderSync.sync_folder)
    add_chunks = Delegated("_intake", DocumentIntake.add_chunks)
    add_qa_pairs = Delegated("_intake", DocumentIntake.add_qa_pairs)
    add_qa_csv = Delegated("_intake", DocumentIntake.add_qa_csv)
    retry_document = Delegated("_intake", DocumentIntake.retry_document)
    index_waiting = Delegated("_intake", DocumentIntake.index_waiting)
    prepare_waiting = Delegated("_intake", DocumentIntake.prepare_waiting)

    def segment_editor(self) -> SegmentEditor:
        """Read and edit this dataset's segments one by one (each edit re-indexes that segment)."""
        return SegmentEditor(
            self._context.sessions, self.id, lambda: self._context.index(self.id), self.process_rule
        )

    # -- search ---------------------------------------------------------------------------------

    def search(
        self, query: str, *, filter: MetadataFilter | dict[str, Any] | None = None, **override: Any
    ) -> list[Hit]:
        """Search with the dataset's retrieval config, fields overridden by keyword arguments.

        ``ds.search("...", search_method="full_text_search", top_k=10)``; ``filter`` keeps only
        documents whose metadata pass it (Dify's ``metadata_filtering_conditions`` shape:
        ``{"logical_operator": "and", "conditions": [{"name", "comparison_operator", "value"}]}``);
        ``section="Guide > Install"`` keeps only segments in that section or one under it.
        """
        if filter is not None:
            override["metadata_filter"] = filter
        return self.search_with(query, self.retrieval.merged(override))

    def search_with(
        self, query: str, config: RetrievalConfig, *, semantic_query: str | None = None
    ) -> list[Hit]:
        """Search with ``config``; ``semantic_query`` (a HyDE passage) drives semantic search in
        place of ``query`` when given."""
        index = self._context.index(self.id)
        model = None
        if config.reranking.mode == "reranking_model":
            model = self._context.rerank_model(config.reranking.model)
        scope = self._scope(query, config)
        return index.search_service.search(
            query, config, rerank_model=model, semantic_query=semantic_query, scope=scope
        )

    def automatic_filter(self, question: str) -> AutomaticFilterResult:
        """The metadata conditions the chat model writes for ``question`` over this dataset's
        fields (what ``metadata_filtering_mode="automatic"`` applies), with notes on any dropped."""
        metadata = self.metadata
        return automatic_filter(
            self.chat_model(), question, metadata.fields(), builtin=metadata.builtin_enabled
        )

    def _scope(self, query: str, config: RetrievalConfig) -> DocumentScope | None:
        """What a search may return: the documents the manual filter and the automatic one keep,
        in the config's section."""
        metadata = self.metadata
        scope = metadata.scope(config.metadata_filter) if config.metadata_filter else None
        if config.metadata_filtering_mode == "automatic":
            written = self.automatic_filter(query).metadata_filter
            automatic = metadata.scope(written) if written is not None else None
            if automatic is not None:
                scope = automatic if scope is None else scope.intersect(automatic)
        if config.section is not None:
            in_section = DocumentScope.of_section(config.section)
            scope = in_section if scope is None else scope.intersect(in_section)
        return scope

    def count_hits(self, segment_ids: Sequence[str]) -> None:
        """Add one to the ``hit_count`` of each segment a retrieval returned (the API counts the
        hits it answers with; library searches and evaluations count nothing)."""
        self._segments.count_hits(segment_ids)

    sections = Delegated("_sections", DatasetSections.all)
    section_descriptions = Delegated("_sections", DatasetSections.descriptions)

    def describe_section(self, name: str, description: str | None) -> SectionInfo:
        """Set the description of section ``name`` (None or blank removes it): what an answer's
        intent step reads to choose a section."""
        return self.describe_sections({name: description})[0]

    describe_sections = Delegated("_sections", DatasetSections.describe_many)

    @property
    def metadata(self) -> DatasetMetadata:
        """The dataset's metadata fields, its documents' values, and filters over them."""
        return DatasetMetadata(self._context.sessions, self.id, self._context.metadata_changed)

    @property
    def calibration(self) -> Calibration:
        """How its hits' relevance is scored, and from which file. Opens its embedding model (for
        the model's exact name), not its stores: a command beside a running server reads it too."""
        model = self._context.embedding(self.id)
        return calibration_for(self.embedding_model, self._context.settings.home, model.name)

    def persist_query_embeddings(self, upcoming: Sequence[str] = ()) -> None:
        """Keep query embeddings in the database cache too (evaluations repeat their queries),
        embedding the ``upcoming`` queries now, in batches."""
        embedding = self._context.index(self.id).embedding
        embedding.persist_queries = True
        embedding.warm_queries(upcoming)

    def optimize(self) -> None:
        """Build the stores' search indexes after a large ingest (writes wait; searches go on)."""
        self._context.index(self.id).optimize()

    def rebuild_keywords(
        self,
        *,
        batch_size: int = 500,
        should_stop: Callable[[], bool] | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> int:
        """Rebuild the keyword postings from the segments, re-reading the jieba user dictionary:
        after it changed, or the extraction did. One transaction per ``batch_size`` points;
        ``should_stop`` is asked between batches. Returns the points rebuilt."""
        return self._context.index(self.id).rebuild_keywords(
            batch_size=batch_size, should_stop=should_stop, on_progress=on_progress
        )
