"""Metadata database: models, engine and session factory."""

from zhiku.core.db.engine import make_engine, make_session_factory
from zhiku.core.db.models import (
    Base,
    DatasetRow,
    DocumentRow,
    EmbeddingCacheRow,
    KeywordPostingRow,
    SegmentRow,
)

__all__ = [
    "Base",
    "DatasetRow",
    "DocumentRow",
    "EmbeddingCacheRow",
    "KeywordPostingRow",
    "SegmentRow",
    "make_engine",
    "make_session_factory",
]
