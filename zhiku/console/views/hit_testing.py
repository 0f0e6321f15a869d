"""Hit testing: a query against a dataset with its retrieval settings beside it (change them,
run again, save them), filters on metadata fields, each hit's final score and every channel's
own score and rank drawn as bars, and the dataset's recent queries (one click runs one again,
with the search method it ran with)."""

from __future__ import annotations

from typing import Any

from flask import render_template, request
from flask.typing import ResponseReturnValue

from zhiku.api.context import context
from zhiku.api.views.retrieval import records
from zhiku.console import forms
from zhiku.console.blueprint import console, wants_json
from zhiku.console.channel_chart import BAR_WIDTH, channel_bars, threshold_mark
from zhiku.console.history import PastQuery, QueryHistory
from zhiku.console.refusals import refusal
from zhiku.console.views.common import dataset_of
from zhiku.core.errors import InvalidInput
from zhiku.core.metadata import BUILTIN_FIELDS, OPERATORS
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.fusion.registry import fusion_modes
from zhiku.knowledge_base import Dataset


def _history() -> QueryHistory:
    return QueryHistory(context().kb.sessions)


def _page(dataset: Dataset, config: RetrievalConfig, query: str, **values: Any) -> str:
    metadata = dataset.metadata
    builtin = list(BUILTIN_FIELDS) if metadata.builtin_enabled else []
    types = {name: BUILTIN_FIELDS[name] for name in builtin} | {f.name: f.type for f in metadata.fields()}
    return render_template(
        "hit_testing.html",
        dataset=dataset,
        config=config,
        query=query,
        fields=[field.name for field in metadata.fields()] + builtin,
        field_types=types,
        operators=OPERATORS,
        builtin_fields=BUILTIN_FIELDS,
        filter_rows=forms.MAX_FILTER_ROWS,
        form=request.form,
        search_methods=forms.SEARCH_METHODS,
        channels=forms.CHANNELS,
        fusion_modes=fusion_modes(),
        history=_history().recent(dataset.id),
        bar_width=BAR_WIDTH,
        **values,
    )


@console.route("/datasets/<dataset_id>/hit-testing")
def hit_testing(dataset_id: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    query = forms.text(request.args, "query", max_chars=forms.MAX_QUERY_CHARS)
    return _page(dataset, dataset.retrieval, query, results=None, saved=False)


@console.route("/datasets/<dataset_id>/hit-testing", methods=["POST"])
def run_hit_test(dataset_id: str) -> ResponseReturnValue:
    dataset = dataset_of(dataset_id)
    form = request.form
    try:
        return _run(dataset, form)
    except (forms.FormError, InvalidInput) as exc:
        if wants_json():
            raise
        # the page again with the query and filters as they were sent, the error beside them
        query = form.get("query", "")
        if isinstance(exc, InvalidInput):
            exc = forms.FormError("filter", str(exc))
        error = refusal("hit", exc)
        return _page(dataset, dataset.retrieval, query, results=None, saved=False, error=error), 400


def _run(dataset: Dataset, form: forms.Form) -> str:
    if form.get("action") == "again":  # a recent query: the dataset's settings, its search method
        method = forms.choice(form, "search_method", forms.SEARCH_METHODS)
        config = dataset.retrieval.merged({"search_method": method})
    else:
        config = forms.retrieval(form, dataset.retrieval)
    saved = form.get("action") == "save"
    if saved:
        dataset.update(retrieval=config)
    query = forms.query(form)
    metadata = dataset.metadata
    builtin = list(BUILTIN_FIELDS) if metadata.builtin_enabled else []
    condition = forms.metadata_filter(form, metadata.fields(), builtin)
    searched = config.merged({"metadata_filter": condition}) if condition is not None else config
    found = records(dataset.search_with(query, searched))
    values = metadata.values_of([record["segment"]["document_id"] for record in found])
    _history().add(PastQuery(dataset.id, query, config.search_method, len(found)))
    return _page(
        dataset,
        config,
        query,
        results=found,
        bars=channel_bars(found, config.channels),
        threshold=searched.score_threshold,
        mark=threshold_mark(searched.score_threshold),
        values=values,
        saved=saved,
    )
