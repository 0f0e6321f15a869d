"""jieba keyword search: keywords and weighted postings per segment in the metadata DB, scored search."""

from zhiku.datasource.keyword.extraction import KeywordExtractor, extract_keywords
from zhiku.datasource.keyword.store import KeywordStore

__all__ = ["KeywordExtractor", "KeywordStore", "extract_keywords"]
