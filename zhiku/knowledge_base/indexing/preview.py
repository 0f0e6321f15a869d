"""The segments a file would make, before it is indexed: the dataset's own pipeline (extractor →
cleaners → splitter → index processor) run on the file's bytes, nothing embedded or stored.

Only the first segments go through the index processor (a Q&A index asks the chat model for
each); the count of all the splitter made is given beside them.
"""

from __future__ import annotations

from dataclasses import dataclass

from zhiku.core.documents import Segment
from zhiku.knowledge_base.indexing.pipeline import Pipeline

#: Segments a preview shows.
PREVIEW_SEGMENTS = 20
#: The document id the preview's segments are made for (they are never written).
PREVIEW_DOCUMENT = "preview"


@dataclass(frozen=True)
class Preview:
    """The first ``segments`` of a file and how many the splitter cut in all."""

    segments: list[Segment]
    total: int


def preview_segments(pipeline: Pipeline, data: bytes, name: str, *, limit: int = PREVIEW_SEGMENTS) -> Preview:
    """What indexing ``data`` (a file called ``name``) with ``pipeline`` would store, up to
    ``limit`` segments; the extractor's errors (ExtractionError, UnsupportedFileType) pass."""
    chunks = pipeline.chunks(data, name)
    outcome = pipeline.index_processor.transform(chunks[:limit], PREVIEW_DOCUMENT)
    return Preview(outcome.segments, len(chunks))
