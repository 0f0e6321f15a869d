"""Index processors by ``doc_form``: ``paragraph`` and ``qa_model``; parent_child, summary plug in here."""

from zhiku.core.registry import Registry
from zhiku.index_processors.base import ChunkFailure, IndexOutcome, IndexProcessor
from zhiku.index_processors.paragraph import ParagraphIndexProcessor
from zhiku.index_processors.qa import QAIndexProcessor

index_processors: Registry[IndexProcessor] = Registry("index_processors")
index_processors.add("paragraph", ParagraphIndexProcessor)
index_processors.add("qa_model", QAIndexProcessor)

__all__ = [
    "ChunkFailure",
    "IndexOutcome",
    "IndexProcessor",
    "ParagraphIndexProcessor",
    "QAIndexProcessor",
    "index_processors",
]
