"""zhiku (知库): a modular RAG knowledge-base engine.

Public API::

    from zhiku import KnowledgeBase, Pipeline, RetrievalConfig

The names are imported on first use (PEP 562), so ``import zhiku`` and the ``zhiku`` command
start without loading the database, stores and models that only some commands need.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zhiku.core.documents import Chunk, Document, Hit, Segment
    from zhiku.core.errors import ExtractionError, NotFound, UnsupportedFileType, ZhikuError
    from zhiku.core.retrieval_config import RerankingConfig, RetrievalConfig
    from zhiku.knowledge_base import Dataset, DocumentInfo, KnowledgeBase, Pipeline, PipelineSpec

__version__ = "0.1.0"

#: public name → the module defining it
_PUBLIC = {
    "Chunk": "zhiku.core.documents",
    "Document": "zhiku.core.documents",
    "Hit": "zhiku.core.documents",
    "Segment": "zhiku.core.documents",
    "ExtractionError": "zhiku.core.errors",
    "NotFound": "zhiku.core.errors",
    "UnsupportedFileType": "zhiku.core.errors",
    "ZhikuError": "zhiku.core.errors",
    "RerankingConfig": "zhiku.core.retrieval_config",
    "RetrievalConfig": "zhiku.core.retrieval_config",
    "Dataset": "zhiku.knowledge_base",
    "DocumentInfo": "zhiku.knowledge_base",
    "KnowledgeBase": "zhiku.knowledge_base",
    "Pipeline": "zhiku.knowledge_base",
    "PipelineSpec": "zhiku.knowledge_base",
}

__all__ = [
    "Chunk",
    "Dataset",
    "Document",
    "DocumentInfo",
    "ExtractionError",
    "Hit",
    "KnowledgeBase",
    "NotFound",
    "Pipeline",
    "PipelineSpec",
    "RerankingConfig",
    "RetrievalConfig",
    "Segment",
    "UnsupportedFileType",
    "ZhikuError",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'zhiku' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
