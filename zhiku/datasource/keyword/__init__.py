"""jieba keyword search: keywords and weighted postings per segment in the metadata DB, scored search."""

from zhiku.datasource.keyword.store import KeywordStore
from zhiku.text.keywords import KeywordExtractor, extract_keywords

__all__ = ["KeywordExtractor", "KeywordStore", "extract_keywords"]
