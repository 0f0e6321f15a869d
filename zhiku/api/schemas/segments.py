"""Segment and child chunk bodies and queries."""

from __future__ import annotations

from pydantic import Field

from zhiku.api.schemas.base import ApiModel, Pagination
from zhiku.api.schemas.limits import MAX_KEYWORDS, MAX_NAME_CHARS, MAX_SEGMENT_CHARS, Name


class SegmentListQuery(Pagination):
    status: list[Name] = Field(
        default_factory=list, max_length=10, description="stored segments are 'completed'"
    )
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)
    enabled: bool | None = None


class SegmentItem(ApiModel):
    content: str = Field(
        min_length=1, max_length=MAX_SEGMENT_CHARS, description="text, or the question in a qa_model dataset"
    )
    answer: str | None = Field(None, max_length=MAX_SEGMENT_CHARS)
    keywords: list[Name] = Field(default_factory=list, max_length=MAX_KEYWORDS)


class SegmentsCreate(ApiModel):
    segments: list[SegmentItem] = Field(min_length=1, max_length=100)


class SegmentChange(ApiModel):
    content: str | None = Field(None, min_length=1, max_length=MAX_SEGMENT_CHARS)
    answer: str | None = Field(None, max_length=MAX_SEGMENT_CHARS)
    keywords: list[Name] | None = Field(None, max_length=MAX_KEYWORDS)
    enabled: bool | None = None
    regenerate_child_chunks: bool = False


class SegmentUpdate(ApiModel):
    segment: SegmentChange


class ChildChunkListQuery(Pagination):
    keyword: str | None = Field(None, max_length=MAX_NAME_CHARS)


class ChildChunkBody(ApiModel):
    """A child chunk's text (parent-child datasets): indexed in every store in its parent's place."""

    content: str = Field(min_length=1, max_length=MAX_SEGMENT_CHARS)
