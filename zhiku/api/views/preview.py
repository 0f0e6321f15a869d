"""``/datasets/{id}/document/preview-by-file``: the segments a file would make, before it is
sent to be indexed — the dataset's own pipeline run on the upload, nothing queued or stored
(Dify's indexing estimate, for one file)."""

from __future__ import annotations

from flask import Response, jsonify

from zhiku.api.context import visible_dataset
from zhiku.api.responses import ChunkPreview
from zhiku.api.routing import Routes, Upload
from zhiku.api.views.documents import check_type
from zhiku.knowledge_base.indexing.preview import preview_segments

routes = Routes("documents")


@routes.route(
    "POST",
    "/datasets/{dataset_id}/document/preview-by-file",
    summary="Preview the segments a file would make (multipart: file; nothing is indexed)",
    file=True,
    response=ChunkPreview,
)
def preview_by_file(dataset_id: str, upload: Upload) -> Response:
    dataset = visible_dataset(dataset_id)
    check_type(upload)
    shown = preview_segments(dataset.pipeline(), upload.data, upload.name)
    return jsonify(
        {
            "total_segments": shown.total,
            "preview": [
                {
                    "content": segment.content,
                    "tokens": segment.tokens,
                    "answer": segment.answer,
                    "child_chunks": [child.content for child in segment.children],
                }
                for segment in shown.segments
            ],
        }
    )
