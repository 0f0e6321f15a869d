"""``/datasets/{id}/documents/{doc}/segments/{seg}/child_chunks``: a parent segment's children
(parent-child datasets): list, add, change, delete — each re-indexes that parent's children in
the vector, BM25 and keyword stores, all or nothing. Other datasets answer 400."""

from __future__ import annotations

from flask import Response, jsonify

from zhiku.api import dify
from zhiku.api.context import visible_dataset
from zhiku.api.responses import ChildChunkOne, ChildChunkPage, Result
from zhiku.api.routing import Routes
from zhiku.api.schemas import ChildChunkBody, ChildChunkListQuery
from zhiku.api.views.common import offset, page
from zhiku.api.views.segments import SEGMENT

routes = Routes("child_chunks")

CHILD_CHUNKS = SEGMENT + "/child_chunks"
CHILD_CHUNK = CHILD_CHUNKS + "/{child_chunk_id}"


@routes.route(
    "GET",
    CHILD_CHUNKS,
    summary="List a parent segment's child chunks (filter by keyword)",
    query=ChildChunkListQuery,
    response=ChildChunkPage,
)
def list_child_chunks(
    dataset_id: str, document_id: str, segment_id: str, query: ChildChunkListQuery
) -> Response:
    editor = visible_dataset(dataset_id).segment_editor()
    stored, total = editor.children(
        document_id, segment_id, offset=offset(query), limit=query.limit, keyword=query.keyword
    )
    return page([dify.child_chunk(item) for item in stored], total, query)


@routes.route(
    "POST",
    CHILD_CHUNKS,
    summary="Add a child chunk to a parent segment",
    body=ChildChunkBody,
    response=ChildChunkOne,
)
def create_child_chunk(dataset_id: str, document_id: str, segment_id: str, body: ChildChunkBody) -> Response:
    stored = visible_dataset(dataset_id).segment_editor().add_child(document_id, segment_id, body.content)
    return jsonify({"data": dify.child_chunk(stored)})


@routes.route(
    "PATCH",
    CHILD_CHUNK,
    summary="Change a child chunk's content",
    body=ChildChunkBody,
    response=ChildChunkOne,
)
def update_child_chunk(
    dataset_id: str, document_id: str, segment_id: str, child_chunk_id: str, body: ChildChunkBody
) -> Response:
    editor = visible_dataset(dataset_id).segment_editor()
    stored = editor.update_child(document_id, segment_id, child_chunk_id, body.content)
    return jsonify({"data": dify.child_chunk(stored)})


@routes.route("DELETE", CHILD_CHUNK, summary="Delete a child chunk (a parent keeps one)", response=Result)
def delete_child_chunk(dataset_id: str, document_id: str, segment_id: str, child_chunk_id: str) -> Response:
    visible_dataset(dataset_id).segment_editor().delete_child(document_id, segment_id, child_chunk_id)
    return jsonify({"result": "success"})
