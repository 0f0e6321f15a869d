"""Index processors by ``doc_form``: paragraph now; qa, parent_child, summary plug in here."""

from zhiku.core.registry import Registry
from zhiku.index_processors.base import IndexProcessor
from zhiku.index_processors.paragraph import ParagraphIndexProcessor

index_processors: Registry[IndexProcessor] = Registry("index_processors")
index_processors.add("paragraph", ParagraphIndexProcessor)

__all__ = ["IndexProcessor", "ParagraphIndexProcessor", "index_processors"]
