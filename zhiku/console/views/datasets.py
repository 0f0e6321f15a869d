"""Datasets: the list with counts and a status summary, creating one, and its settings
(process rule, retrieval, metadata fields)."""

from __future__ import annotations

from typing import cast, get_args

from flask import redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from zhiku.api.auth import principal, require_unscoped
from zhiku.api.context import context
from zhiku.api.errors import ApiError
from zhiku.api.plugins import plugin_names
from zhiku.api.schemas import MAX_NAME_CHARS
from zhiku.api.views.datasets import open_embedding, remove_dataset
from zhiku.cleaners.registry import cleaners
from zhiku.console import forms
from zhiku.console.blueprint import console, wants_json
from zhiku.console.refusals import Refusal, refusal
from zhiku.console.views.common import dataset_of, paging
from zhiku.core.errors import AlreadyExists, InvalidInput, ZhikuError
from zhiku.core.metadata import BUILTIN_FIELDS, FieldType
from zhiku.fusion.registry import fusion_modes
from zhiku.index_processors import index_processors
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.metadata import MAX_FIELDS
from zhiku.splitters import splitters


@console.route("/")
def home() -> ResponseReturnValue:
    return redirect(url_for("console.datasets"))


@console.route("/datasets")
def datasets() -> ResponseReturnValue:
    return _datasets_page()


def _datasets_page(error: Refusal | None = None) -> str:
    ctx = context()
    pages = paging()
    keyword = forms.text(request.args, "keyword", max_chars=MAX_NAME_CHARS)
    ids, total = ctx.catalog.dataset_ids(
        offset=pages.offset, limit=pages.size, keyword=keyword or None, within=principal().datasets
    )
    return render_template(
        "datasets.html",
        datasets=ctx.catalog.datasets(ids),
        counts=ctx.catalog.dataset_counts(ids),
        statuses=ctx.catalog.status_counts(ids),
        total=total,
        paging=pages,
        keyword=keyword,
        default_embedding=ctx.settings.embedding_model,
        index_methods=forms.INDEX_METHODS,
        error=error,
    )


@console.route("/datasets", methods=["POST"])
def create_dataset() -> ResponseReturnValue:
    """A new dataset; a field refused is shown beside it with what was typed (JSON: the 400)."""
    require_unscoped("create datasets")
    ctx = context()
    try:
        name, description = forms.name_and_description(request.form)
        embedding = forms.text(request.form, "embedding_model", max_chars=MAX_NAME_CHARS)
        embedding = embedding or ctx.settings.embedding_model
        try:
            open_embedding(embedding)
        except (ApiError, ZhikuError) as exc:
            raise forms.FormError("embedding_model", str(exc)) from None
        rule = forms.index_method(request.form)
        dataset = ctx.kb.create_dataset(
            name, description=description, embedding_model=embedding, process_rule=rule
        )
    except (forms.FormError, AlreadyExists) as exc:
        if wants_json():
            raise
        return _datasets_page(refusal("create", exc)), 400
    return redirect(url_for("console.documents", dataset_id=dataset.id))


@console.route("/datasets/<dataset_id>/settings")
def settings(dataset_id: str) -> ResponseReturnValue:
    return _settings_page(dataset_of(dataset_id))


def _settings_page(dataset: Dataset, error: Refusal | None = None) -> str:
    metadata = dataset.metadata
    return render_template(
        "settings.html",
        dataset=dataset,
        rule=dataset.process_rule,
        retrieval=dataset.retrieval,
        indexed=dataset.stats().get("segments", 0) > 0,
        cleaner_names=plugin_names(cleaners),
        splitter_names=plugin_names(splitters),
        doc_forms=plugin_names(index_processors),
        parent_modes=forms.PARENT_MODES,
        search_methods=forms.SEARCH_METHODS,
        channels=forms.CHANNELS,
        fusion_modes=fusion_modes(),
        fields=metadata.fields(),
        field_counts=metadata.use_counts(),
        builtin_enabled=metadata.builtin_enabled,
        builtin_fields=BUILTIN_FIELDS,
        max_fields=MAX_FIELDS,
        error=error,
    )


@console.route("/datasets/<dataset_id>/settings", methods=["POST"])
def save_settings(dataset_id: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    try:
        name, description = forms.name_and_description(request.form)
        dataset.update(
            name=name,
            description=description,
            process_rule=forms.process_rule(request.form, dataset.process_rule),
            retrieval=forms.retrieval(request.form, dataset.retrieval),
        )
    except (forms.FormError, AlreadyExists) as exc:
        if wants_json():
            raise
        return _settings_page(dataset, refusal("settings", exc)), 400
    return redirect(url_for("console.settings", dataset_id=dataset.id, saved=1))


@console.route("/datasets/<dataset_id>/delete", methods=["POST"])
def delete_dataset(dataset_id: str) -> ResponseReturnValue:
    remove_dataset(dataset_of(dataset_id))
    return redirect(url_for("console.datasets"))


@console.route("/datasets/<dataset_id>/fields", methods=["POST"])
def change_fields(dataset_id: str) -> ResponseReturnValue:
    """Add, rename or delete a metadata field, or switch the built-in fields on or off; a name
    refused is shown beside its input, as typed."""
    dataset = dataset_of(dataset_id)
    metadata = dataset.metadata
    action = forms.choice(request.form, "action", ("add", "rename", "delete", "builtin"))
    field_id = forms.text(request.form, "field_id", max_chars=64, required=action in ("rename", "delete"))
    try:
        if action == "add":
            field_type = cast(FieldType, forms.choice(request.form, "type", get_args(FieldType)))
            metadata.add_field(forms.text(request.form, "name", max_chars=255, required=True), field_type)
        elif action == "rename":
            metadata.rename_field(field_id, forms.text(request.form, "name", max_chars=255, required=True))
    except (forms.FormError, AlreadyExists, InvalidInput) as exc:
        if wants_json():
            raise
        form = "add-field" if action == "add" else f"rename-{field_id}"
        if isinstance(exc, InvalidInput):  # the field store's own refusal of a name
            exc = forms.FormError("name", str(exc).removeprefix("name: "))
        return _settings_page(dataset, refusal(form, exc)), 400
    if action == "delete":
        metadata.delete_field(field_id)
    elif action == "builtin":
        metadata.set_builtin(request.form.get("enabled") == "on")
    return redirect(url_for("console.settings", dataset_id=dataset_id) + "#fields")
