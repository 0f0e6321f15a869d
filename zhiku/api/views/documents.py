"""``/datasets/{id}/document(s)``: upload, re-upload, list, read, delete, enable/disable/archive,
indexing status by batch, retry, pause and resume. Uploads are indexed by the worker pool; every
create or update call returns at once with the document ``waiting`` and a ``batch`` to poll."""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from flask import Response, jsonify

from zhiku.api import dify
from zhiku.api.auth import principal
from zhiku.api.context import context, visible_dataset
from zhiku.api.errors import ApiError
from zhiku.api.responses import (
    DocumentOut,
    DocumentPage,
    IndexingStatusList,
    QueuedDocument,
    Result,
    RetryResult,
)
from zhiku.api.routing import Routes, Upload
from zhiku.api.schemas import (
    DocumentIds,
    DocumentListQuery,
    FileDocumentData,
    FileDocumentUpdateData,
    ProcessingOptions,
    TextDocumentCreate,
    TextDocumentUpdate,
)
from zhiku.api.views.common import document_json, documents_json, offset, page
from zhiku.extractors.admission import check_upload
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.dataset_documents import DatasetDocuments
from zhiku.knowledge_base.document_intake import OnDuplicate
from zhiku.knowledge_base.runtime.jobs import new_batch

routes = Routes("documents")

STATUS_ACTIONS = ("enable", "disable", "archive", "un_archive")


def _text_file_name(name: str) -> str:
    return name if name.lower().endswith(".txt") else f"{name}.txt"


def _text_bytes(text: str) -> bytes:
    data = text.encode("utf-8")
    limit = context().settings.upload_max_mb
    if len(data) > limit * 1024 * 1024:
        raise ApiError(413, "file_too_large", f"the text is larger than {limit:g} MB")
    return data


def check_type(upload: Upload) -> None:
    """Before a file is queued: 400 for an empty one, 415 for one no extractor will read (an
    unknown suffix, binary bytes named as text) — the console refuses the same files."""
    check_upload(upload.name, upload.data)


def _rule(dataset: Dataset, options: ProcessingOptions) -> dict[str, object] | None:
    spec = dify.pipeline_spec(
        options.process_rule, options.doc_form, options.doc_language, dataset.process_rule
    )
    return spec.model_dump() if spec is not None else None


def _admit(count: int = 1) -> None:
    """429 ``queue_full`` when the caller's key already has its most documents queued."""
    context().quota.admit(_quota_key(), count)


def _quota_key() -> str:
    return principal().key_id or "trusted"


def queue_document(
    dataset: Dataset,
    document_id: str | None,
    *,
    name: str,
    data: bytes | None,
    file_name: str,
    process_rule: dict[str, object] | None,
) -> tuple[str, str]:
    """Queue a new document (``document_id`` None) or a new version of one — new content
    (``data``), or its stored upload again under a new rule — counted against the caller's
    queue quota; returns the document id and the batch to poll. Call :func:`wake_workers` once
    the answer is built, so the answer shows the document ``waiting``, not already running."""
    _admit()
    batch = new_batch()
    queue = context().queue
    if document_id is None:
        assert data is not None, "a new document needs content"
        document_id = queue.enqueue(
            dataset.id, name, data, file_name=file_name, batch=batch, process_rule=process_rule
        )
    else:
        queue.requeue(
            dataset.id,
            document_id,
            batch=batch,
            name=name,
            data=data,
            file_name=file_name,
            process_rule=process_rule,
        )
    context().quota.record(_quota_key(), [document_id])
    return document_id, batch


@dataclass(frozen=True)
class Queued:
    """An upload as queued: the document (new, or the one already holding its content), the
    batch to poll, and ``skipped`` / ``replaced`` for a duplicate (a skipped one's batch is the one
    it was last queued in; None when it was never queued through the API)."""

    document_id: str
    batch: str | None
    duplicate: str | None = None


def queue_upload(
    dataset: Dataset,
    *,
    name: str,
    data: bytes,
    file_name: str,
    process_rule: dict[str, object] | None,
    on_duplicate: OnDuplicate,
) -> Queued:
    """A new document for ``data``, unless the dataset already holds this content: then, as
    ``Dataset.add_files`` does, ``skip`` answers with the document holding it, ``replace``
    indexes that document again from ``data`` and ``keep`` adds a second one."""
    existing = None
    if on_duplicate != "keep":
        existing = context().catalog.document_with_content(dataset.id, hashlib.sha256(data).hexdigest())
    if existing is None:
        return Queued(
            *queue_document(
                dataset, None, name=name, data=data, file_name=file_name, process_rule=process_rule
            )
        )
    if on_duplicate == "skip":
        # the batch it was last queued in: a Dify client polling it sees the document as it is
        job = context().queue.states([existing.id]).get(existing.id)
        return Queued(existing.id, job.batch if job is not None else None, "skipped")
    document_id, batch = queue_document(
        dataset, existing.id, name=name, data=data, file_name=file_name, process_rule=process_rule
    )
    return Queued(document_id, batch, "replaced")


def _answer(dataset: Dataset, queued: Queued) -> Response:
    """The document (``waiting`` when queued) and the batch to poll; workers woken after."""
    body: dict[str, object] = {"document": document_json(dataset, queued.document_id), "batch": queued.batch}
    if queued.duplicate is not None:
        body["duplicate"] = queued.duplicate
    response = jsonify(body)
    if queued.duplicate != "skipped":
        wake_workers()
    return response


def _index(
    dataset: Dataset,
    document_id: str,
    *,
    name: str,
    data: bytes | None,
    file_name: str,
    process_rule: dict[str, object] | None,
) -> Response:
    """Queue a new version of the document and answer with it ``waiting`` and the batch to poll."""
    queued = queue_document(
        dataset, document_id, name=name, data=data, file_name=file_name, process_rule=process_rule
    )
    return _answer(dataset, Queued(*queued))


def _index_file(
    dataset: Dataset, document_id: str | None, data: FileDocumentData | FileDocumentUpdateData, upload: Upload
) -> Response:
    check_type(upload)
    name, rule = data.name or upload.name, _rule(dataset, data)
    if document_id is not None:
        return _index(
            dataset, document_id, name=name, data=upload.data, file_name=upload.name, process_rule=rule
        )
    assert isinstance(data, FileDocumentData), "a new document comes from create-by-file"
    queued = queue_upload(
        dataset,
        name=name,
        data=upload.data,
        file_name=upload.name,
        process_rule=rule,
        on_duplicate=data.on_duplicate,
    )
    return _answer(dataset, queued)


def wake_workers() -> None:
    workers = context().workers
    if workers is not None:
        workers.wake()


@routes.route(
    "POST",
    "/datasets/{dataset_id}/document/create-by-text",
    "/datasets/{dataset_id}/document/create_by_text",
    summary="Add a document from text (indexed in the background)",
    body=TextDocumentCreate,
    response=QueuedDocument,
)
def create_by_text(dataset_id: str, body: TextDocumentCreate) -> Response:
    dataset = visible_dataset(dataset_id)
    queued = queue_upload(
        dataset,
        name=body.name,
        data=_text_bytes(body.text),
        file_name=_text_file_name(body.name),
        process_rule=_rule(dataset, body),
        on_duplicate=body.on_duplicate,
    )
    return _answer(dataset, queued)


@routes.route(
    "POST",
    "/datasets/{dataset_id}/document/create-by-file",
    "/datasets/{dataset_id}/document/create_by_file",
    summary="Add a document from a file (multipart: file + JSON data; indexed in the background)",
    form=FileDocumentData,
    file=True,
    response=QueuedDocument,
)
def create_by_file(dataset_id: str, data: FileDocumentData, upload: Upload) -> Response:
    """With ``original_document_id`` in ``data``, a new version of that document (Dify's form)."""
    return _index_file(visible_dataset(dataset_id), data.original_document_id or None, data, upload)


@routes.route(
    "POST",
    "/datasets/{dataset_id}/documents/{document_id}/update-by-text",
    "/datasets/{dataset_id}/documents/{document_id}/update_by_text",
    summary="Replace a document's text, name or process rule (re-indexed in the background)",
    body=TextDocumentUpdate,
    response=QueuedDocument,
)
def update_by_text(dataset_id: str, document_id: str, body: TextDocumentUpdate) -> Response:
    dataset = visible_dataset(dataset_id)
    current = dataset.document(document_id)
    rule = _rule(dataset, body)
    if body.text is None and rule is None:
        if body.name:
            _documents(dataset).rename(document_id, body.name)
        return jsonify({"document": document_json(dataset, document_id), "batch": None})
    name = body.name or current.name
    return _index(
        dataset,
        document_id,
        name=name,
        data=_text_bytes(body.text) if body.text is not None else None,
        file_name=_text_file_name(name),
        process_rule=rule,
    )


@routes.route(
    "POST",
    "/datasets/{dataset_id}/documents/{document_id}/update-by-file",
    "/datasets/{dataset_id}/documents/{document_id}/update_by_file",
    summary="Replace a document's file (multipart: file + JSON data; re-indexed in the background)",
    form=FileDocumentUpdateData,
    file=True,
    response=QueuedDocument,
)
def update_by_file(
    dataset_id: str, document_id: str, data: FileDocumentUpdateData, upload: Upload
) -> Response:
    dataset = visible_dataset(dataset_id)
    dataset.document(document_id)  # 404 before the upload is looked at
    return _index_file(dataset, document_id, data, upload)


@routes.route(
    "GET",
    "/datasets/{dataset_id}/documents",
    summary="List documents (newest first)",
    query=DocumentListQuery,
    response=DocumentPage,
)
def list_documents(dataset_id: str, query: DocumentListQuery) -> Response:
    dataset = visible_dataset(dataset_id)
    infos, total = context().catalog.documents(
        dataset.id, offset=offset(query), limit=query.limit, keyword=query.keyword
    )
    return page(documents_json(dataset, infos), total, query)


@routes.route(
    "GET", "/datasets/{dataset_id}/documents/{document_id}", summary="Get a document", response=DocumentOut
)
def get_document(dataset_id: str, document_id: str) -> Response:
    return jsonify(document_json(visible_dataset(dataset_id), document_id))


@routes.route(
    "DELETE", "/datasets/{dataset_id}/documents/{document_id}", summary="Delete a document", response=Result
)
def delete_document(dataset_id: str, document_id: str) -> Response:
    remove_document(visible_dataset(dataset_id), document_id)
    return jsonify({"result": "success"})


def remove_document(dataset: Dataset, document_id: str) -> None:
    """Delete a document in any status and its upload; a run indexing it in this process stops
    at once (in another, at its next look at the database)."""
    dataset.delete_document(document_id)
    context().queue.deleted(document_id)
    context().queue.uploads.remove(document_id)


@routes.route(
    "PATCH",
    "/datasets/{dataset_id}/documents/status/{action}",
    "/datasets/{dataset_id}/documents/status/{action}/batch",
    summary="Enable, disable, archive or un_archive documents in batch",
    body=DocumentIds,
    response=Result,
    path_schemas={"action": {"type": "string", "enum": list(STATUS_ACTIONS)}},
)
def document_status(dataset_id: str, action: str, body: DocumentIds) -> Response:
    set_documents_status(visible_dataset(dataset_id), action, body.document_ids)
    return jsonify({"result": "success"})


def _documents(dataset: Dataset) -> DatasetDocuments:
    """The dataset's document rows, where renames and archiving are written."""
    kb = context().kb
    return DatasetDocuments(kb.sessions, dataset.id, functools.partial(kb.dataset_index, dataset.id))


def set_documents_status(dataset: Dataset, action: str, document_ids: list[str]) -> None:
    """Enable, disable, archive or un_archive documents; 400 ``invalid_action`` for another action."""
    documents = _documents(dataset)
    if action in ("enable", "disable"):
        documents.set_enabled(document_ids, action == "enable")
    elif action in ("archive", "un_archive"):
        documents.set_archived(document_ids, action == "archive")
    else:
        raise ApiError(
            400, "invalid_action", f"unknown action {action!r}; known: {', '.join(STATUS_ACTIONS)}"
        )


@routes.route(
    "GET",
    "/datasets/{dataset_id}/documents/{batch}/indexing-status",
    summary="Indexing progress of a batch: status, stage times, segments done",
    response=IndexingStatusList,
)
def batch_indexing_status(dataset_id: str, batch: str) -> Response:
    dataset = visible_dataset(dataset_id)
    ctx = context()
    ids = ctx.queue.batch_documents(dataset.id, batch)
    jobs = ctx.queue.states(ids)
    data = []
    for document_id in ids:
        progress = ctx.workers.progress(document_id) if ctx.workers is not None else None
        data.append(dify.indexing_status(dataset.document(document_id), jobs.get(document_id), progress))
    return jsonify({"data": data})


@routes.route(
    "POST",
    "/datasets/{dataset_id}/retry",
    summary="Index failed documents again from their stored uploads",
    body=DocumentIds,
    response=RetryResult,
)
def retry(dataset_id: str, body: DocumentIds) -> Response:
    batch = retry_documents(visible_dataset(dataset_id), body.document_ids)
    return jsonify({"result": "success", "batch": batch})


def retry_documents(dataset: Dataset, document_ids: list[str]) -> str:
    """Queue failed documents again from their stored uploads; returns the batch to poll."""
    _admit(len(document_ids))
    batch = new_batch()
    context().queue.retry(dataset.id, document_ids, batch)
    context().quota.record(_quota_key(), list(document_ids))
    wake_workers()
    return batch


@routes.route(
    "PATCH",
    "/datasets/{dataset_id}/documents/{document_id}/processing/pause",
    summary="Pause a waiting document, or a running one at its next stage",
    response=Result,
)
def pause(dataset_id: str, document_id: str) -> Response:
    context().queue.pause(visible_dataset(dataset_id).id, document_id)
    return jsonify({"result": "success"})


@routes.route(
    "PATCH",
    "/datasets/{dataset_id}/documents/{document_id}/processing/resume",
    summary="Resume a paused document (indexed again from the start)",
    response=Result,
)
def resume(dataset_id: str, document_id: str) -> Response:
    context().queue.resume(visible_dataset(dataset_id).id, document_id)
    wake_workers()
    return jsonify({"result": "success"})
