"""A dataset's segments: paged, searched, filtered by document and by enabled; each edited
(content, keywords, answer) or switched on and off, re-indexed for that segment alone."""

from __future__ import annotations

from flask import redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from zhiku.api.context import context
from zhiku.api.schemas import MAX_NAME_CHARS
from zhiku.console import forms
from zhiku.console.blueprint import console
from zhiku.console.views.account import safe_next
from zhiku.console.views.common import dataset_of, paging
from zhiku.knowledge_base import Dataset

#: Documents offered in the page's document filter.
MAX_DOCUMENT_CHOICES = 200
#: Child chunks shown (and editable) on a parent segment's page.
MAX_CHILDREN_SHOWN = 200


def _document_names(dataset: Dataset, document_ids: set[str]) -> dict[str, str]:
    return context().catalog.document_names(dataset.id, document_ids)


@console.route("/datasets/<dataset_id>/segments")
def segments(dataset_id: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    pages = paging()
    keyword = forms.text(request.args, "keyword", max_chars=MAX_NAME_CHARS)
    document_id = forms.text(request.args, "document", max_chars=64) or None
    enabled_choice = forms.choice(request.args, "enabled", ("all", "yes", "no"), "all")
    enabled = None if enabled_choice == "all" else enabled_choice == "yes"
    stored, total = dataset.segment_editor().page(
        document_id, offset=pages.offset, limit=pages.size, keyword=keyword or None, enabled=enabled
    )
    choices = context().catalog.document_choices(dataset.id, MAX_DOCUMENT_CHOICES)
    return render_template(
        "segments.html",
        dataset=dataset,
        segments=stored,
        names=_document_names(dataset, {item.segment.document_id for item in stored}),
        child_counts=dataset.segment_editor().child_counts([item.segment.id for item in stored]),
        documents=choices,
        total=total,
        paging=pages,
        keyword=keyword,
        document_id=document_id or "",
        enabled=enabled_choice,
        qa=dataset.process_rule.doc_form == "qa_model",
    )


@console.route("/datasets/<dataset_id>/segments/<segment_id>")
def segment(dataset_id: str, segment_id: str) -> ResponseReturnValue:
    """One segment, as a citation or a hit links to it."""
    dataset = dataset_of(dataset_id)
    editor = dataset.segment_editor()
    stored = editor.find(segment_id)
    children, child_total = editor.children(
        stored.segment.document_id, segment_id, limit=MAX_CHILDREN_SHOWN
    )
    return render_template(
        "segment.html",
        dataset=dataset,
        item=stored,
        names=_document_names(dataset, {stored.segment.document_id}),
        qa=dataset.process_rule.doc_form == "qa_model",
        children=children,
        child_total=child_total,
    )


@console.route("/datasets/<dataset_id>/segments/<segment_id>/children", methods=["POST"])
def add_child(dataset_id: str, segment_id: str) -> ResponseReturnValue:
    """A new child chunk of a parent segment (parent-child index), indexed at once."""
    dataset = dataset_of(dataset_id)
    editor = dataset.segment_editor()
    document_id = editor.find(segment_id).segment.document_id
    content = forms.text(request.form, "content", max_chars=forms.MAX_SEGMENT_CHARS, required=True)
    editor.add_child(document_id, segment_id, content)
    return redirect(url_for("console.segment", dataset_id=dataset.id, segment_id=segment_id))


@console.route("/datasets/<dataset_id>/segments/<segment_id>/children/<child_id>", methods=["POST"])
def edit_child(dataset_id: str, segment_id: str, child_id: str) -> ResponseReturnValue:
    """Change a child chunk's content, or delete it (``action=delete``)."""
    dataset = dataset_of(dataset_id)
    editor = dataset.segment_editor()
    document_id = editor.find(segment_id).segment.document_id
    if forms.choice(request.form, "action", ("save", "delete"), "save") == "delete":
        editor.delete_child(document_id, segment_id, child_id)
    else:
        content = forms.text(request.form, "content", max_chars=forms.MAX_SEGMENT_CHARS, required=True)
        editor.update_child(document_id, segment_id, child_id, content)
    return redirect(url_for("console.segment", dataset_id=dataset.id, segment_id=segment_id))


@console.route("/datasets/<dataset_id>/segments/<segment_id>", methods=["POST"])
def edit_segment(dataset_id: str, segment_id: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    editor = dataset.segment_editor()
    current = editor.find(segment_id).segment
    form = request.form
    if "enabled" in form and "content" not in form:
        editor.update(current.document_id, segment_id, enabled=form["enabled"] == "1")
    else:
        limit = forms.MAX_SEGMENT_CHARS
        # a browser sends a textarea's line ends as CRLF: the text is stored as it was typed
        typed = forms.text(form, "content", max_chars=limit, required=True, strip=False)
        content = typed.replace("\r\n", "\n")
        answer = forms.text(form, "answer", max_chars=limit) if "answer" in form else None
        # the keywords shown are the old text's: unless the user edited them, the new text's follow
        edited = "keywords" in form and form.get("keywords") != form.get("keywords_shown")
        editor.update(
            current.document_id,
            segment_id,
            content=content if content != current.content else None,
            answer=answer,
            keywords=forms.keywords(form) if edited else None,
        )
    back = url_for("console.segments", dataset_id=dataset.id)
    return redirect(safe_next(form.get("next"), back))
