"""A dataset's documents: upload (several files, dragged or chosen), live progress through the
indexing stages, a failed document's error and retry, enable/disable/archive/delete, metadata.

Uploads go through the API's own queue (type check, per-key quota, workers woken). Progress is
polled: the script fetches the table's rows again (``/rows``), rendered by the same template.
"""

from __future__ import annotations

from typing import cast, get_args

from flask import g, jsonify, make_response, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from zhiku.api import dify
from zhiku.api.context import context
from zhiku.api.errors import STATUS_OF_CODE, ApiError
from zhiku.api.routing import Upload
from zhiku.api.schemas import MAX_NAME_CHARS
from zhiku.api.views.common import documents_json
from zhiku.api.views.documents import (
    check_type,
    queue_upload,
    remove_document,
    retry_documents,
    set_documents_status,
    wake_workers,
)
from zhiku.console import forms
from zhiku.console.blueprint import console, wants_json
from zhiku.console.i18n import translator
from zhiku.console.views.account import safe_next
from zhiku.console.views.common import Paging, dataset_of, paging
from zhiku.console.views.document import document_page
from zhiku.core.document_status import IN_PROGRESS, DocumentStatus
from zhiku.core.errors import ExtractionError, UnsupportedFileType
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.document_intake import OnDuplicate

#: Files one upload request may carry (the script sends them one by one).
MAX_FILES_PER_UPLOAD = 20
STAGES = ("waiting", "parsing", "cleaning", "splitting", "indexing", "completed")
ACTIONS = ("enable", "disable", "archive", "un_archive", "retry", "delete")
BATCH_ACTIONS = ("enable", "disable", "archive", "un_archive", "delete")
#: Documents one batch action may name (a page shows fewer).
MAX_BATCH = 200
_ACTIVE = {DocumentStatus.WAITING.value, *(status.value for status in IN_PROGRESS)}


def _rows(dataset: Dataset, pages: Paging, keyword: str) -> dict[str, object]:
    """What the documents table shows: Dify's document records plus each one's progress."""
    ctx = context()
    infos, total = ctx.catalog.documents(
        dataset.id, offset=pages.offset, limit=pages.size, keyword=keyword or None
    )
    jobs = ctx.queue.states([info.id for info in infos])
    progress = {}
    for info in infos:
        running = ctx.workers.progress(info.id) if ctx.workers is not None else None
        progress[info.id] = dify.indexing_status(info, jobs.get(info.id), running)
    records = documents_json(dataset, infos)
    return {
        "values": dataset.metadata.values_of([info.id for info in infos]),
        "documents": records,
        "progress": progress,
        "active": any(record["indexing_status"] in _ACTIVE for record in records),
        "total": total,
        "paging": pages,
        "keyword": keyword,
        "stages": STAGES,
    }


@console.route("/datasets/<dataset_id>")
def documents(dataset_id: str) -> ResponseReturnValue:
    return _documents_page(dataset_of(dataset_id))


def _documents_page(dataset: Dataset, **extra: object) -> str:
    keyword = forms.text(request.args, "keyword", max_chars=MAX_NAME_CHARS)
    return render_template(
        "documents.html",
        dataset=dataset,
        fields=dataset.metadata.fields(),
        upload_max_mb=context().settings.upload_max_mb,
        max_files=MAX_FILES_PER_UPLOAD,
        **_rows(dataset, paging(), keyword),
        **extra,
    )


@console.route("/datasets/<dataset_id>/rows")
def document_rows(dataset_id: str) -> ResponseReturnValue:
    """The table body alone, for the page's script to refresh progress without reloading."""
    dataset = dataset_of(dataset_id)
    keyword = forms.text(request.args, "keyword", max_chars=MAX_NAME_CHARS)
    values = _rows(dataset, paging(), keyword)
    response = make_response(
        render_template("document_rows.html", dataset=dataset, fields=dataset.metadata.fields(), **values)
    )
    response.headers["X-Zhiku-Active"] = "1" if values["active"] else "0"
    response.headers["X-Zhiku-Total"] = str(values["total"])
    return response


@console.route("/datasets/<dataset_id>/upload", methods=["POST"])
def upload(dataset_id: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    files = request.files.getlist("file")
    if not files:
        raise forms.FormError("file", "choose at least one file")
    if len(files) > MAX_FILES_PER_UPLOAD:
        raise forms.FormError("file", f"at most {MAX_FILES_PER_UPLOAD} files at once")
    choice = forms.choice(request.form, "on_duplicate", get_args(OnDuplicate), "skip")
    on_duplicate = cast(OnDuplicate, choice)
    queued = []
    for storage in files:
        name = (storage.filename or "upload").rsplit("/", 1)[-1][:1024]
        item = Upload(name, storage.read())
        admit(item)
        done = queue_upload(
            dataset, name=name, data=item.data, file_name=name, process_rule=None, on_duplicate=on_duplicate
        )
        queued.append(
            {
                "id": done.document_id,
                "name": name,
                "batch": done.batch,
                "duplicate": done.duplicate,
                # the name it was indexed under, for "already indexed as …"
                "existing_name": dataset.document(done.document_id).name if done.duplicate else None,
            }
        )
    wake_workers()
    if wants_json():
        return jsonify({"documents": queued})
    return redirect(url_for("console.documents", dataset_id=dataset.id))


def admit(item: Upload) -> None:
    """The API's check of an upload; a file refused is answered with the reason alone, in the
    page's language (the page shows it beside the file's name)."""
    try:
        check_type(item)
    except (ExtractionError, UnsupportedFileType) as exc:
        reason = exc.reason if isinstance(exc, ExtractionError) else exc.detail
        status = STATUS_OF_CODE.get(exc.code, 400)
        raise ApiError(status, exc.code, translator(g.lang)(reason or "unsupported file type")) from None


@console.route("/datasets/<dataset_id>/documents/<document_id>/<action>", methods=["POST"])
def document_action(dataset_id: str, document_id: str, action: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    if action not in ACTIONS:
        raise forms.FormError("action", f"one of {', '.join(ACTIONS)}")
    dataset.document(document_id)  # 404 for a document of another dataset
    if action == "delete":
        remove_document(dataset, document_id)
    elif action == "retry":
        retry_documents(dataset, [document_id])
    else:
        set_documents_status(dataset, action, [document_id])
    back = url_for("console.documents", dataset_id=dataset.id)
    return redirect(safe_next(request.form.get("next"), back))


@console.route("/datasets/<dataset_id>/documents/batch", methods=["POST"])
def batch_documents(dataset_id: str) -> ResponseReturnValue:
    """One action on the documents ticked in the table (the API's batch status change)."""
    dataset = dataset_of(dataset_id)
    action = forms.choice(request.form, "action", BATCH_ACTIONS)
    chosen = list(dict.fromkeys(request.form.getlist("document_ids")))
    if not chosen:
        raise forms.FormError("document_ids", "choose at least one document")
    if len(chosen) > MAX_BATCH:
        raise forms.FormError("document_ids", f"at most {MAX_BATCH} documents at once")
    if any(len(document_id) > 64 for document_id in chosen):
        raise forms.FormError("document_ids", "document ids of at most 64 characters")
    for document_id in chosen:
        dataset.document(document_id)  # 404, before anything changes, for another dataset's
    if action == "delete":
        for document_id in chosen:
            remove_document(dataset, document_id)
    else:
        set_documents_status(dataset, action, chosen)
    return redirect(url_for("console.documents", dataset_id=dataset.id))


@console.route("/datasets/<dataset_id>/documents/<document_id>/metadata", methods=["POST"])
def document_metadata(dataset_id: str, document_id: str) -> ResponseReturnValue:
    """Save a document's values; a value refused is shown beside its field, what was typed kept."""
    dataset = dataset_of(dataset_id)
    dataset.document(document_id)
    metadata = dataset.metadata
    try:
        metadata.set_values(document_id, forms.metadata_values(request.form, metadata.fields()))
    except forms.FormError as exc:
        if wants_json():
            raise
        refused = {"document": document_id, "input": exc.input_name, "message": str(exc)}
        if request.form.get("next"):  # sent from the document's own page
            return document_page(dataset, document_id, metadata_error=refused, typed_values=request.form), 400
        return _documents_page(dataset, metadata_error=refused, typed_values=request.form), 400
    back = url_for("console.documents", dataset_id=dataset.id)
    return redirect(safe_next(request.form.get("next"), back))
