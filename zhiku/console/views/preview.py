"""The documents page's "Preview chunks": the first chosen file cut by the dataset's pipeline
into the segments indexing would make, shown with their token counts; nothing is stored."""

from __future__ import annotations

from flask import render_template, request
from flask.typing import ResponseReturnValue

from zhiku.api.routing import Upload
from zhiku.console import forms
from zhiku.console.blueprint import console
from zhiku.console.views.common import dataset_of
from zhiku.console.views.documents import admit
from zhiku.knowledge_base.indexing.preview import preview_segments


@console.route("/datasets/<dataset_id>/preview", methods=["POST"])
def preview(dataset_id: str) -> ResponseReturnValue:
    """The segments as an HTML fragment the page's script puts under the upload form."""
    dataset = dataset_of(dataset_id)
    storage = request.files.get("file")
    if storage is None:
        raise forms.FormError("file", "choose a file to preview")
    name = (storage.filename or "upload").rsplit("/", 1)[-1][:1024]
    item = Upload(name, storage.read())
    admit(item)
    shown = preview_segments(dataset.pipeline(), item.data, name)
    return render_template(
        "preview.html", name=name, segments=shown.segments, total=shown.total, rule=dataset.process_rule
    )
