"""Retrieval: one dataset (Dify's ``retrieve`` / ``hit-testing``) or several, with routing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flask import Response, jsonify

from zhiku.agent_tools.search_tool import KbSearchArgs, SearchResult, kb_search
from zhiku.api import dify
from zhiku.api.auth import principal
from zhiku.api.context import context, visible_dataset, visible_dataset_with_settings
from zhiku.api.dify_retrieval import parse_retrieval
from zhiku.api.responses import Records, RoutedRecords
from zhiku.api.routing import Routes
from zhiku.api.schemas import CrossRetrieveBody, RetrieveBody
from zhiku.core.documents import Hit, Segment
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.indexing.segments import StoredSegment

routes = Routes("retrieval")


def records(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Hits as segment records, in rank order, from what the search read with them (nothing is
    read again); each hit counts once in its segment's ``hit_count`` (written in the background,
    shown here with the counts not yet written)."""
    ctx = context()
    ctx.hits.add(hit.segment_id for hit in hits)
    pending = ctx.hits.pending([hit.segment_id for hit in hits])
    return [record_of(hit, pending.get(hit.segment_id, 0)) for hit in hits]


def record_of(hit: Hit, pending_hits: int = 0) -> dict[str, Any]:
    """One hit's record (Dify's shape); a hit is of a served segment, so an enabled one."""
    segment = Segment(
        id=hit.segment_id,
        document_id=hit.document_id,
        position=hit.position,
        content=hit.content,
        tokens=hit.tokens,
        hash=hit.hash,
        keywords=list(hit.keywords),
        answer=hit.answer,
        enabled=True,
        metadata=hit.metadata,
    )
    stored = StoredSegment(segment, hit.created_at, hit.hit_count + pending_hits)
    return dify.record(hit, stored, hit.dataset_name)


@routes.route(
    "POST",
    "/datasets/{dataset_id}/retrieve",
    "/datasets/{dataset_id}/hit-testing",
    summary="Search a dataset (its retrieval config, fields overridden by retrieval_model)",
    body=RetrieveBody,
    response=Records,
)
def retrieve(dataset_id: str, body: RetrieveBody) -> Response:
    dataset, settings = visible_dataset_with_settings(dataset_id)
    config: RetrievalConfig = parse_retrieval(body.retrieval_model or {}, settings.retrieval)
    hits = dataset.search_with(body.query, config)
    return jsonify({"query": {"content": body.query}, "records": records(hits)})


@routes.route(
    "POST",
    "/retrieve",
    summary="Search several datasets: routing 'single' (a router picks one) or 'multiple' (all, merged)",
    body=CrossRetrieveBody,
    response=RoutedRecords,
)
def retrieve_across(body: CrossRetrieveBody) -> Response:
    targets = _targets(body.datasets)
    if targets == []:
        return jsonify(
            {
                "query": {"content": body.query},
                "records": [],
                "datasets": [],
                "routing": body.routing,
                "router": None,
                "note": "no dataset to search",
            }
        )
    result = context().kb.retrieve(
        body.query,
        datasets=targets,
        routing=body.routing,
        router=body.router,
        top_k=body.top_k,
        score_threshold=body.score_threshold,
        merge=body.merge,
    )
    return jsonify(
        {
            "query": {"content": body.query},
            "records": records(result.hits),
            "datasets": result.datasets,
            "routing": result.routing,
            "router": result.router,
            "note": result.note,
        }
    )


@routes.route(
    "POST",
    "/kb-search",
    summary="The kb_search agent tool: scored snippets within max_chars, none under min_score",
    body=KbSearchArgs,
    response=SearchResult,
)
def kb_search_view(body: KbSearchArgs) -> Response:
    targets = _targets(body.datasets)

    def search(query: str, _: Sequence[str] | None, top_k: int) -> list[Hit]:
        if targets == []:
            return []
        return context().kb.retrieve(query, datasets=targets, top_k=top_k).hits

    return jsonify(kb_search(search, body).model_dump())


def _targets(names: Sequence[str] | None) -> list[str] | None:
    """The ids of ``names`` (each visible to the caller), else of every dataset a scoped key
    may read; None for all."""
    allowed = principal().datasets
    if names is not None:
        return [visible_dataset(name).id for name in names]
    if allowed is not None:
        return [summary.id for summary in context().catalog.datasets(sorted(allowed))]
    return None
