"""Helpers the views share: JSON pages, and a dataset's records as Dify shapes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import Response, jsonify

from zhiku.api import dify
from zhiku.api.context import context
from zhiku.api.schemas import Pagination
from zhiku.knowledge_base import Dataset
from zhiku.knowledge_base.records import DocumentInfo


def page(items: list[dict[str, Any]], total: int, query: Pagination, **extra: Any) -> Response:
    """Dify's page: ``data``, ``has_more``, ``limit``, ``total``, ``page``."""
    return jsonify(
        {
            "data": items,
            "has_more": query.page * query.limit < total,
            "limit": query.limit,
            "total": total,
            "page": query.page,
            **extra,
        }
    )


def offset(query: Pagination) -> int:
    return (query.page - 1) * query.limit


def datasets_json(dataset_ids: Sequence[str]) -> list[dict[str, Any]]:
    catalog = context().catalog
    counts = catalog.dataset_counts(dataset_ids)
    return [dify.dataset(summary, counts[summary.id]) for summary in catalog.datasets(dataset_ids)]


def documents_json(dataset: Dataset, infos: Sequence[DocumentInfo]) -> list[dict[str, Any]]:
    ctx = context()
    ids = [info.id for info in infos]
    ctx.hits.flush()  # each document's hit_count with every hit counted so far
    jobs = ctx.queue.states(ids)
    words = ctx.catalog.document_words(ids)
    hits = ctx.catalog.document_hits(ids)
    positions = ctx.catalog.document_positions(dataset.id, ids)
    form = dataset.process_rule.doc_form
    return [
        dify.document(
            info,
            jobs.get(info.id),
            position=positions.get(info.id, 0),
            words=words.get(info.id, 0),
            form=form,
            hits=hits.get(info.id, 0),
        )
        for info in infos
    ]


def document_json(dataset: Dataset, document_id: str) -> dict[str, Any]:
    return documents_json(dataset, [dataset.document(document_id)])[0]
