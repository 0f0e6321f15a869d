"""Document bodies and queries: list, create and update from text or a file, bulk status changes."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

from zhiku.api.schemas.base import ApiModel, Pagination, deduplicated
from zhiku.api.schemas.limits import MAX_LIST_ITEMS, MAX_NAME_CHARS, MAX_TEXT_CHARS, Name
from zhiku.api.schemas.options import IndexingTechnique, ProcessingOptions, RetrievalModel
from zhiku.knowledge_base.document_intake import OnDuplicate


class DocumentListQuery(Pagination):
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)


#: What an upload whose content the dataset already holds does: the library's own choice.
ON_DUPLICATE_DESCRIPTION = (
    "zhiku: when the dataset already holds this content: skip (answer with the document holding it), "
    "replace (index that document again from this upload) or keep both"
)


class TextDocumentCreate(ProcessingOptions):
    name: str = Field(min_length=1, max_length=1024)
    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS)
    on_duplicate: OnDuplicate = Field("skip", description=ON_DUPLICATE_DESCRIPTION)
    indexing_technique: IndexingTechnique = None
    retrieval_model: RetrievalModel = Field(None, description="ignored: set it on the dataset")
    embedding_model: str | None = Field(
        None, max_length=MAX_NAME_CHARS, description="ignored: the dataset's model is used"
    )
    embedding_model_provider: str | None = Field(None, max_length=MAX_NAME_CHARS)


class FileDocumentData(ProcessingOptions):
    """The JSON ``data`` part of ``create-by-file``."""

    name: str | None = Field(None, min_length=1, max_length=1024)
    indexing_technique: IndexingTechnique = None
    original_document_id: str | None = Field(
        None, max_length=MAX_NAME_CHARS, description="re-index this document from the file instead"
    )
    on_duplicate: OnDuplicate = Field("skip", description=ON_DUPLICATE_DESCRIPTION)
    retrieval_model: RetrievalModel = Field(None, description="ignored: set it on the dataset")
    embedding_model: str | None = Field(None, max_length=MAX_NAME_CHARS)
    embedding_model_provider: str | None = Field(None, max_length=MAX_NAME_CHARS)


class TextDocumentUpdate(ProcessingOptions):
    name: str | None = Field(None, min_length=1, max_length=1024)
    text: str | None = Field(None, min_length=1, max_length=MAX_TEXT_CHARS)


class FileDocumentUpdateData(ProcessingOptions):
    """The JSON ``data`` part of ``update-by-file``."""

    name: str | None = Field(None, min_length=1, max_length=1024)


class DocumentIds(ApiModel):
    document_ids: Annotated[list[Name], AfterValidator(deduplicated)] = Field(
        min_length=1, max_length=MAX_LIST_ITEMS
    )
