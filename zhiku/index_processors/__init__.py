"""Index processors by ``doc_form``: ``paragraph``, ``qa_model`` and ``hierarchical_model`` (parent-child)."""

from zhiku.core.registry import Registry
from zhiku.index_processors.base import ChunkFailure, IndexOutcome, IndexProcessor
from zhiku.index_processors.paragraph import ParagraphIndexProcessor
from zhiku.index_processors.parent_child import ParentChildIndexProcessor
from zhiku.index_processors.qa import QAIndexProcessor

index_processors: Registry[IndexProcessor] = Registry("index_processors")
index_processors.add("paragraph", ParagraphIndexProcessor)
index_processors.add("qa_model", QAIndexProcessor)
index_processors.add("hierarchical_model", ParentChildIndexProcessor)

__all__ = [
    "ChunkFailure",
    "IndexOutcome",
    "IndexProcessor",
    "ParagraphIndexProcessor",
    "ParentChildIndexProcessor",
    "QAIndexProcessor",
    "index_processors",
]
