"""zhiku (知库): a modular RAG knowledge-base engine.

Public API::

    from zhiku import KnowledgeBase, Pipeline, RetrievalConfig
"""

from zhiku.core.documents import Chunk, Document, Hit, Segment
from zhiku.core.errors import ExtractionError, NotFound, UnsupportedFileType, ZhikuError
from zhiku.core.retrieval_config import RerankingConfig, RetrievalConfig
from zhiku.knowledge_base import Dataset, DocumentInfo, KnowledgeBase, Pipeline, PipelineSpec

__version__ = "0.1.0"

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
