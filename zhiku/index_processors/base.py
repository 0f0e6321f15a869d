"""Index processors turn chunks into the segments that get indexed (ARCHITECTURE §5).

``transform`` is pure (chunks in, segments out); the dataset's index writes the segments to every
store, so a processor never touches a store or a session itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from zhiku.core.documents import Chunk, Segment

#: Keyword extraction injected by the dataset: text → [(keyword, weight)], best first.
KeywordFn = Callable[[str], list[tuple[str, float]]]


class IndexProcessor(Protocol):
    doc_form: str

    def transform(self, chunks: Sequence[Chunk], document_id: str, keywords: KeywordFn) -> list[Segment]: ...
