"""``/datasets/{id}/documents/{doc}/segments``: list, add, read, change and delete segments;
a change is re-indexed in the vector, BM25 and keyword stores for that segment only."""

from __future__ import annotations

from flask import Response, jsonify

from zhiku.api import dify
from zhiku.api.context import context, visible_dataset
from zhiku.api.responses import Result, SegmentList, SegmentOne, SegmentPage
from zhiku.api.routing import Routes
from zhiku.api.schemas import SegmentListQuery, SegmentsCreate, SegmentUpdate
from zhiku.api.views.common import offset, page
from zhiku.knowledge_base.indexing.segments import NewSegment

routes = Routes("segments")

SEGMENTS = "/datasets/{dataset_id}/documents/{document_id}/segments"
SEGMENT = SEGMENTS + "/{segment_id}"


@routes.route(
    "GET",
    SEGMENTS,
    summary="List a document's segments (filter by status, enabled, keyword)",
    query=SegmentListQuery,
    response=SegmentPage,
)
def list_segments(dataset_id: str, document_id: str, query: SegmentListQuery) -> Response:
    dataset = visible_dataset(dataset_id)
    context().hits.flush()  # every hit counted so far, not only those already written
    stored, total = dataset.segment_editor().page(
        document_id,
        offset=offset(query),
        limit=query.limit,
        keyword=query.keyword,
        enabled=query.enabled,
        statuses=query.status,
    )
    return page(
        [dify.segment(item) for item in stored],
        total,
        query,
        doc_form=dify.doc_form(dataset.process_rule.doc_form),
    )


@routes.route(
    "POST", SEGMENTS, summary="Add segments to an indexed document", body=SegmentsCreate, response=SegmentList
)
def create_segments(dataset_id: str, document_id: str, body: SegmentsCreate) -> Response:
    dataset = visible_dataset(dataset_id)
    stored = dataset.segment_editor().add(
        document_id, [NewSegment(item.content, item.answer, item.keywords) for item in body.segments]
    )
    return jsonify(
        {
            "data": [dify.segment(item) for item in stored],
            "doc_form": dify.doc_form(dataset.process_rule.doc_form),
        }
    )


@routes.route("GET", SEGMENT, summary="Get a segment", response=SegmentOne)
def get_segment(dataset_id: str, document_id: str, segment_id: str) -> Response:
    dataset = visible_dataset(dataset_id)
    context().hits.flush()
    stored = dataset.segment_editor().get(document_id, segment_id)
    return jsonify({"data": dify.segment(stored), "doc_form": dify.doc_form(dataset.process_rule.doc_form)})


def _update(dataset_id: str, document_id: str, segment_id: str, body: SegmentUpdate) -> Response:
    dataset = visible_dataset(dataset_id)
    context().hits.flush()
    change = body.segment
    stored = dataset.segment_editor().update(
        document_id,
        segment_id,
        content=change.content,
        answer=change.answer,
        keywords=change.keywords,
        enabled=change.enabled,
    )
    return jsonify({"data": dify.segment(stored), "doc_form": dify.doc_form(dataset.process_rule.doc_form)})


@routes.route(
    "POST",
    SEGMENT,
    summary="Update a segment: content, answer, keywords, enabled (Dify's method)",
    body=SegmentUpdate,
    response=SegmentOne,
)
def update_segment(dataset_id: str, document_id: str, segment_id: str, body: SegmentUpdate) -> Response:
    return _update(dataset_id, document_id, segment_id, body)


@routes.route(
    "PATCH",
    SEGMENT,
    summary="Update a segment: content, answer, keywords, enabled",
    body=SegmentUpdate,
    response=SegmentOne,
)
def patch_segment(dataset_id: str, document_id: str, segment_id: str, body: SegmentUpdate) -> Response:
    return _update(dataset_id, document_id, segment_id, body)


@routes.route("DELETE", SEGMENT, summary="Delete a segment", response=Result)
def delete_segment(dataset_id: str, document_id: str, segment_id: str) -> Response:
    visible_dataset(dataset_id).segment_editor().delete(document_id, segment_id)
    return jsonify({"result": "success"})
