"""``/datasets``: list, create, read, update and delete datasets."""

from __future__ import annotations

from flask import Response, jsonify

from zhiku.api import dify
from zhiku.api.auth import principal, require_unscoped
from zhiku.api.context import context, visible_dataset
from zhiku.api.dify_retrieval import parse_retrieval
from zhiku.api.errors import ApiError
from zhiku.api.responses import DatasetOut, DatasetPage
from zhiku.api.routing import Routes
from zhiku.api.schemas import DatasetCreate, DatasetListQuery, DatasetUpdate
from zhiku.api.views.common import datasets_json, offset, page
from zhiku.core.errors import AlreadyExists
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec

routes = Routes("datasets")


def open_embedding(name: str) -> None:
    """Open (and cache) the embedding model before the dataset is made, so that a model the API
    cannot build answers 400. The API passes no model options, and a model that needs some
    (``transformers`` a path, ``openai`` an endpoint) fails in its constructor."""
    try:
        context().kb.embedding(name, {})
    except TypeError:
        raise ApiError(
            400,
            "invalid_param",
            f"embedding model {name!r} needs options (a path, an endpoint) the HTTP API cannot pass",
        ) from None


@routes.route(
    "GET",
    "/datasets",
    summary="List datasets (a scoped key sees its own)",
    query=DatasetListQuery,
    response=DatasetPage,
)
def list_datasets(query: DatasetListQuery) -> Response:
    ids, total = context().catalog.dataset_ids(
        offset=offset(query), limit=query.limit, keyword=query.keyword, within=principal().datasets
    )
    return page(datasets_json(ids), total, query)


@routes.route("POST", "/datasets", summary="Create a dataset", body=DatasetCreate, response=DatasetOut)
def create_dataset(body: DatasetCreate) -> tuple[Response, int]:
    require_unscoped("create datasets")
    rule = dify.pipeline_spec(body.process_rule, body.doc_form, body.doc_language, PipelineSpec())
    ctx = context()
    open_embedding(body.embedding_model or ctx.settings.embedding_model)
    dataset = ctx.kb.create_dataset(
        body.name,
        description=body.description,
        retrieval=parse_retrieval(body.retrieval_model) if body.retrieval_model else None,
        process_rule=rule,
        embedding_model=body.embedding_model,
    )
    return jsonify(datasets_json([dataset.id])[0]), 200


@routes.route("GET", "/datasets/{dataset_id}", summary="Get a dataset", response=DatasetOut)
def get_dataset(dataset_id: str) -> Response:
    return jsonify(datasets_json([visible_dataset(dataset_id).id])[0])


@routes.route(
    "PATCH",
    "/datasets/{dataset_id}",
    summary="Update a dataset: name, description, retrieval method, default process rule",
    body=DatasetUpdate,
    response=DatasetOut,
)
def update_dataset(dataset_id: str, body: DatasetUpdate) -> Response:
    dataset = visible_dataset(dataset_id)
    if body.embedding_model and body.embedding_model != dataset.embedding_model:
        raise ApiError(
            400,
            "invalid_param",
            f"the embedding model of a dataset cannot change (it is {dataset.embedding_model!r}); "
            "create a new dataset instead",
        )
    rule = dify.pipeline_spec(body.process_rule, body.doc_form, body.doc_language, dataset.process_rule)
    retrieval = parse_retrieval(body.retrieval_model, dataset.retrieval) if body.retrieval_model else None
    try:
        dataset.update(name=body.name, description=body.description, retrieval=retrieval, process_rule=rule)
    except AlreadyExists:
        if principal().datasets is None:
            raise
        # a scoped key learns nothing of datasets outside its scope, their names included
        raise ApiError(409, "already_exists", "this dataset name cannot be used; choose another") from None
    return jsonify(datasets_json([dataset.id])[0])


@routes.route(
    "DELETE", "/datasets/{dataset_id}", summary="Delete a dataset and all its stores' data", status=204
)
def delete_dataset(dataset_id: str) -> tuple[str, int]:
    remove_dataset(visible_dataset(dataset_id))
    return "", 204


def remove_dataset(dataset: Dataset) -> None:
    """Delete a dataset, all its stores' data and its documents' uploads; its rows go in the
    background (the dataset is gone for every request at once)."""
    ctx = context()
    document_ids = [info.id for info in dataset.documents()]
    ctx.kb.delete_dataset(dataset.id, wait=False)
    for document_id in document_ids:
        ctx.queue.uploads.remove(document_id)
