"""One document's page: what it is (status, words, segments, hits, times, size, source), its
metadata, the process rule it was indexed with, and its segments — added and deleted here.

A segment added is embedded and indexed before the page comes back (the library's segment
editor, as the API's ``POST …/segments``), so a search finds it at once.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from flask import redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from zhiku.api.context import context
from zhiku.api.views.common import documents_json
from zhiku.console import forms
from zhiku.console.blueprint import console
from zhiku.console.views.account import safe_next
from zhiku.console.views.common import dataset_of, paging
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.indexing.segments import NewSegment


def moment(value: datetime | None) -> str:
    """ISO 8601 in UTC for a ``<time>`` the page's script shows in the reader's locale."""
    if value is None:
        return ""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).isoformat().replace("+00:00", "Z")


def document_rule(dataset: Dataset, document_id: str) -> PipelineSpec:
    """The rule the document was queued with, else its dataset's (which it was indexed with)."""
    own = context().queue.process_rule(document_id)
    return PipelineSpec.model_validate(own) if own else dataset.process_rule


def document_page(dataset: Dataset, document_id: str, **extra: Any) -> str:
    info = dataset.document(document_id)
    record = documents_json(dataset, [info])[0]
    pages = paging()
    stored, total = dataset.segment_editor().page(document_id, offset=pages.offset, limit=pages.size)
    times = [time for time in info.stage_times.values() if time is not None]
    return render_template(
        "document.html",
        dataset=dataset,
        info=info,
        doc=record,
        created=moment(info.created_at),
        updated=moment(max(times, default=info.created_at)),
        rule=document_rule(dataset, document_id),
        fields=dataset.metadata.fields(),
        values=dataset.metadata.values_of([document_id]),
        segments=stored,
        names={document_id: info.name},
        total=total,
        paging=pages,
        qa=dataset.process_rule.doc_form == "qa_model",
        **extra,
    )


@console.route("/datasets/<dataset_id>/documents/<document_id>")
def document(dataset_id: str, document_id: str) -> ResponseReturnValue:
    return document_page(dataset_of(dataset_id), document_id)


@console.route("/datasets/<dataset_id>/documents/<document_id>/segments", methods=["POST"])
def add_segment(dataset_id: str, document_id: str) -> ResponseReturnValue:
    """A segment written by hand at the end of an indexed document, searchable once saved."""
    dataset = dataset_of(dataset_id)
    form = request.form
    limit = forms.MAX_SEGMENT_CHARS
    content = forms.text(form, "content", max_chars=limit, required=True, strip=False).replace("\r\n", "\n")
    if not content.strip():
        raise forms.FormError("content", "required")
    answer = forms.text(form, "answer", max_chars=limit) or None
    dataset.segment_editor().add(document_id, [NewSegment(content, answer, forms.keywords(form))])
    return redirect(url_for("console.document", dataset_id=dataset.id, document_id=document_id))


@console.route("/datasets/<dataset_id>/segments/<segment_id>/delete", methods=["POST"])
def delete_segment(dataset_id: str, segment_id: str) -> ResponseReturnValue:
    """A segment gone from the document and from every store (the page asks first)."""
    dataset = dataset_of(dataset_id)
    editor = dataset.segment_editor()
    document_id = editor.find(segment_id).segment.document_id
    editor.delete(document_id, segment_id)
    back = url_for("console.document", dataset_id=dataset.id, document_id=document_id)
    return redirect(safe_next(request.form.get("next"), back))
