"""A dataset's three search channels, each over a store protocol and the dataset's query analysis.

They hold no rows and read no database of their own (the keyword postings aside, which are the
keyword store): what is served, and which candidates are child chunks, is the
:class:`~zhiku.retrieval.catalog.SegmentCatalog`'s answer, asked by :class:`DatasetSearch`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from zhiku.core.scope import DocumentScope
from zhiku.datasource.fulltext.base import FullTextStore
from zhiku.datasource.vector.base import VectorStore
from zhiku.text.tokenizer import Tokenizer

#: What a channel answers: ``(segment_id, raw_score)`` pairs, best first.
Ranked = list[tuple[str, float]]


class QueryEmbedding(Protocol):
    """The dataset's embedding model as a query sees it (with its cache of query vectors).

    ``holds_gil``: embedding a query keeps the GIL throughout (a model computed in Python), so
    a channel in another thread meanwhile would only take turns with it."""

    @property
    def holds_gil(self) -> bool: ...

    def has_query(self, text: str) -> bool: ...

    def embed_query(self, text: str) -> np.ndarray: ...


class QueryAnalysis(Protocol):
    """The dataset's tokenizer as it is now: another process may rewrite the dataset's user
    dictionary, so a channel asks to follow it before reading ``tokenizer``."""

    @property
    def tokenizer(self) -> Tokenizer: ...

    def follow_user_dict(self) -> None: ...


class KeywordPostings(Protocol):
    """Scored keyword search over one dataset's postings (of segments, or of child chunks)."""

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> Ranked: ...

    def attainable(self, query: str) -> float: ...


class ChildCount(Protocol):
    """Whether the dataset has ever had child chunks (then their postings are searched too)."""

    @property
    def has_children(self) -> bool: ...


class SemanticChannel:
    """Cosine similarity of the query's embedding to the points' (``semantic``)."""

    def __init__(self, embedding: QueryEmbedding, vector: VectorStore) -> None:
        self._embedding = embedding
        self._vector = vector

    def holds_gil(self, query: str) -> bool:
        # a query to embed runs the model, which (unless computed in Python) leaves the GIL to
        # the other channels meanwhile
        embedding = self._embedding
        return self._vector.holds_gil and (embedding.holds_gil or embedding.has_query(query))

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> Ranked:
        if scope is not None and scope.empty:
            return []
        vector = self._embedding.embed_query(query)
        return self._vector.search(vector, limit, scope, summaries=summaries)


class FullTextChannel:
    """BM25 over the query's terms, cut by the dataset's tokenizer (``full_text``)."""

    def __init__(self, fulltext: FullTextStore, analysis: QueryAnalysis) -> None:
        self._fulltext = fulltext
        self._analysis = analysis

    def holds_gil(self, query: str) -> bool:
        return self._fulltext.holds_gil

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> Ranked:
        self._analysis.follow_user_dict()
        terms = self._analysis.tokenizer.terms(query)
        return self._fulltext.search(terms, limit, scope, summaries=summaries)

    def attainable(self, query: str) -> float:
        return self._fulltext.attainable(self._analysis.tokenizer.terms(query))


class KeywordChannel:
    """Keyword postings of segments and, once the dataset has any, of child chunks (and of
    summaries, when asked for), merged (``keyword``)."""

    def __init__(
        self,
        segments: KeywordPostings,
        children: KeywordPostings,
        dataset: ChildCount,
        analysis: QueryAnalysis,
    ) -> None:
        self._segments = segments
        self._children = children
        self._dataset = dataset
        self._analysis = analysis

    def holds_gil(self, query: str) -> bool:
        return False  # SQLite and PostgreSQL read the postings without the GIL

    def attainable(self, query: str) -> float:
        found = self._segments.attainable(query)
        return max(found, self._children.attainable(query)) if self._dataset.has_children else found

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> Ranked:
        self._analysis.follow_user_dict()
        found = self._segments.search(query, limit, scope)
        if self._dataset.has_children:
            children = self._children.search(query, limit, scope, summaries=summaries)
            found = sorted(found + children, key=lambda h: (-h[1], h[0]))[:limit]
        return found
