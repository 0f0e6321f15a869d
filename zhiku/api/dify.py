"""Dify's dataset service shapes: reading its process rules, writing its JSON objects.

zhiku's records are translated here and nowhere else, so views stay short and the Dify
compatibility lives in one place: Dify's ``text_model`` is zhiku's ``paragraph``, Dify counts
positions from 1, and Dify times are Unix seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from zhiku.api.dify_retrieval import to_dify
from zhiku.api.plugins import plugin_names
from zhiku.cleaners.registry import cleaners
from zhiku.core.document_status import IN_PROGRESS
from zhiku.core.documents import Hit
from zhiku.index_processors import index_processors
from zhiku.knowledge_base.catalog import DatasetCounts, DatasetSummary
from zhiku.knowledge_base.indexing.child_chunks import StoredChild
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.knowledge_base.indexing.segments import SEGMENT_STATUS, StoredSegment
from zhiku.knowledge_base.records import DocumentInfo
from zhiku.knowledge_base.runtime.jobs import JobState
from zhiku.splitters import splitters

DOC_FORM_IN = {"text_model": "paragraph"}
DOC_FORM_OUT = {"paragraph": "text_model"}
#: Q&A languages a request may name (in any case), as zhiku names them.
LANGUAGES = {"zh": "zh", "Chinese": "zh", "中文": "zh", "en": "en", "English": "en", "英文": "en"}
_LANGUAGE_OF = {name.lower(): code for name, code in LANGUAGES.items()}
#: Statuses shown to Dify clients: a partly failed Q&A document is served, so it is "completed"
#: (its ``error`` says which chunks failed).
_STATUS_OUT = {"completed_with_errors": "completed"}


def timestamp(value: datetime | None) -> float | None:
    """Unix seconds; naive datetimes (SQLite drops the zone) are UTC."""
    if value is None:
        return None
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()


def seconds(value: datetime | None) -> int | None:
    stamp = timestamp(value)
    return int(stamp) if stamp is not None else None


# -- requests ------------------------------------------------------------------------------------


def pipeline_spec(
    process_rule: dict[str, Any] | None,
    doc_form: str | None,
    doc_language: str | None,
    base: PipelineSpec,
) -> PipelineSpec | None:
    """The process rule asked for, over ``base``; None when nothing was asked (``base`` applies).

    Raises ValueError with a message naming what is wrong.
    """
    if process_rule is None and doc_form is None and doc_language is None:
        return None
    data = base.model_dump()
    if process_rule:
        data = (
            _zhiku_rule(process_rule, data)
            if _is_zhiku_rule(process_rule)
            else _dify_rule(process_rule, data)
        )
    if doc_form:
        data["doc_form"] = doc_form
    if doc_language:
        language = _LANGUAGE_OF.get(doc_language.strip().lower())
        if language is None:
            raise ValueError(f"doc_language {doc_language!r} is not supported: Chinese or English")
        data["doc_language"] = language
    try:
        spec = PipelineSpec.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ValueError(f"process_rule.{'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    given = _given_overlaps(process_rule or {})
    problem = spec.overlap_problem(given)
    if problem is not None:
        field, why = problem
        raise ValueError(f"{given[field]}: {why}")
    if DOC_FORM_IN.get(spec.doc_form, spec.doc_form) not in plugin_names(index_processors):
        raise ValueError(f"doc_form {spec.doc_form!r} is not supported; installed: {', '.join(doc_forms())}")
    known = plugin_names(cleaners)
    unknown = [name for name in spec.cleaners if name not in known]
    if unknown:
        raise ValueError(f"unknown pre-processing rule(s) {unknown}; installed: {', '.join(known)}")
    installed = plugin_names(splitters)
    if spec.splitter not in installed:
        raise ValueError(f"unknown splitter {spec.splitter!r}; installed: {', '.join(installed)}")
    return spec.model_copy(update={"doc_form": DOC_FORM_IN.get(spec.doc_form, spec.doc_form)})


def _given_overlaps(rule: dict[str, Any]) -> dict[str, str]:
    """The overlaps a request's process rule sets: the spec's field → where the request has it."""
    if _is_zhiku_rule(rule):
        return {
            field: f"process_rule.{field}"
            for field in ("chunk_overlap", "child_chunk_overlap")
            if rule.get(field) is not None
        }
    rules = rule.get("rules") if rule.get("mode", "automatic") != "automatic" else None
    given: dict[str, str] = {}
    for key, field in (("segmentation", "chunk_overlap"), ("subchunk_segmentation", "child_chunk_overlap")):
        segmentation = rules.get(key) if isinstance(rules, dict) else None
        if isinstance(segmentation, dict) and segmentation.get("chunk_overlap") is not None:
            given[field] = f"process_rule.rules.{key}.chunk_overlap"
    return given


def doc_forms() -> list[str]:
    """The ``doc_form`` names a request may give: zhiku's and Dify's."""
    names = plugin_names(index_processors)
    return sorted({*names, *(DOC_FORM_OUT.get(name, name) for name in names)})


def _is_zhiku_rule(rule: dict[str, Any]) -> bool:
    return "mode" not in rule and "rules" not in rule


def _zhiku_rule(rule: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    unknown = set(rule) - set(PipelineSpec.model_fields)
    if unknown:
        raise ValueError(f"process_rule has unknown field(s) {sorted(unknown)}")
    return {**data, **rule}


def _dify_rule(rule: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    mode = rule.get("mode", "automatic")
    if mode == "automatic":
        return {
            **PipelineSpec().model_dump(),
            "doc_form": data["doc_form"],
            "doc_language": data["doc_language"],
        }
    if mode not in ("custom", "hierarchical"):
        raise ValueError(f"process_rule.mode {mode!r} is not supported: automatic, custom or hierarchical")
    rules = rule.get("rules") or {}
    if not isinstance(rules, dict):
        raise ValueError("process_rule.rules must be an object")
    if mode == "hierarchical":
        data = _hierarchical_rules(rules, {**data, "doc_form": "hierarchical_model"})
    pre = rules.get("pre_processing_rules") or []
    if not isinstance(pre, list) or not all(isinstance(r, dict) and "id" in r for r in pre):
        raise ValueError("process_rule.rules.pre_processing_rules must be a list of {id, enabled}")
    data = {**data, "cleaners": ["default", *(str(r["id"]) for r in pre if r.get("enabled"))]}
    return _segmentation(rules, "segmentation", data, "")


def _segmentation(rules: dict[str, Any], key: str, data: dict[str, Any], prefix: str) -> dict[str, Any]:
    """Dify's ``rules.<key>`` onto the spec's splitter fields (``prefix`` ``child_`` for children)."""
    segmentation = rules.get(key) or {}
    if not isinstance(segmentation, dict):
        raise ValueError(f"process_rule.rules.{key} must be an object")
    separator = segmentation.get("separator")
    if separator:
        data.update(
            {
                f"{prefix}splitter": "fixed_separator",
                f"{prefix}separator": str(separator).replace("\\n", "\n"),
            }
        )
    for field in ("max_tokens", "chunk_overlap"):
        if segmentation.get(field) is not None:
            data[prefix + field] = segmentation[field]
    return data


def _hierarchical_rules(rules: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """Dify's parent-child rules: ``parent_mode`` and the children's ``subchunk_segmentation``."""
    parent_mode = rules.get("parent_mode") or "paragraph"
    if parent_mode not in ("paragraph", "full-doc"):
        raise ValueError(
            f"process_rule.rules.parent_mode {parent_mode!r} is not supported: paragraph or full-doc"
        )
    return _segmentation(rules, "subchunk_segmentation", {**data, "parent_mode": parent_mode}, "child_")


# -- responses -----------------------------------------------------------------------------------


def doc_form(value: str) -> str:
    return DOC_FORM_OUT.get(value, value)


def dataset(summary: DatasetSummary, counts: DatasetCounts) -> dict[str, Any]:
    return {
        "id": summary.id,
        "name": summary.name,
        "description": summary.description,
        "provider": "vendor",
        "permission": "only_me",
        "data_source_type": "upload_file",
        "indexing_technique": "high_quality",
        "app_count": 0,
        "document_count": counts.documents,
        "word_count": counts.words,
        "created_by": "",
        "created_at": seconds(summary.created_at),
        "updated_by": "",
        "updated_at": seconds(summary.updated_at),
        "embedding_model": summary.embedding_model,
        "embedding_model_provider": "zhiku",
        "embedding_available": True,
        "retrieval_model_dict": to_dify(summary.retrieval),
        "tags": [],
        "doc_form": doc_form(summary.process_rule.doc_form),
        "external_knowledge_info": {
            "external_knowledge_id": None,
            "external_knowledge_api_id": None,
            "external_knowledge_api_name": None,
            "external_knowledge_api_endpoint": None,
        },
        "external_retrieval_model": {
            "top_k": summary.retrieval.top_k,
            "score_threshold": 0.0,
            "score_threshold_enabled": None,
        },
        # zhiku's own shapes of the same settings, and its segment count
        "retrieval_config": summary.retrieval.model_dump(),
        "process_rule": summary.process_rule.model_dump(),
        "segment_count": counts.segments,
    }


def display_status(info: DocumentInfo, job: JobState | None) -> str:
    if job is not None and job.archived:
        return "archived"
    if info.status == "waiting":
        return "queuing"
    if info.status in IN_PROGRESS:
        return "indexing"
    if info.status in ("paused", "error"):
        return info.status
    return "available" if info.enabled else "disabled"


def document(
    info: DocumentInfo, job: JobState | None, *, position: int, words: int, form: str, hits: int = 0
) -> dict[str, Any]:
    return {
        "id": info.id,
        "position": position,
        "data_source_type": "upload_file",
        "data_source_info": {"upload_file_id": info.id} if job is not None and job.queued else None,
        "dataset_process_rule_id": None,
        "name": info.name,
        "created_from": "api" if job is not None and job.queued else "local",
        "created_by": "",
        "created_at": seconds(info.created_at),
        "tokens": info.token_count,
        "indexing_status": _STATUS_OUT.get(info.status, info.status),
        "error": info.error,
        "enabled": info.enabled,
        "disabled_at": None,
        "disabled_by": None,
        "archived": bool(job is not None and job.archived),
        "display_status": display_status(info, job),
        "word_count": words,
        "hit_count": hits,
        "doc_form": doc_form(form),
        "segment_count": info.segment_count,
        "content_hash": info.file_hash,
    }


def indexing_status(
    info: DocumentInfo, job: JobState | None, progress: tuple[int, int] | None
) -> dict[str, Any]:
    """Dify's progress record: a stage is completed when the next one starts."""
    times = info.stage_times
    if info.status in ("completed", "completed_with_errors"):
        done = total = info.segment_count
    elif progress is not None:
        done, total = progress
    else:
        done = total = 0
    return {
        "id": info.id,
        "indexing_status": _STATUS_OUT.get(info.status, info.status),
        "processing_started_at": timestamp(times.get("parsing")),
        "parsing_completed_at": timestamp(times.get("cleaning")),
        "cleaning_completed_at": timestamp(times.get("splitting")),
        "splitting_completed_at": timestamp(times.get("indexing")),
        "completed_at": timestamp(times.get("completed")) if info.status.startswith("completed") else None,
        "paused_at": timestamp(job.paused_at) if job is not None and info.status == "paused" else None,
        "error": info.error if info.status in ("error", "completed_with_errors") else None,
        "stopped_at": timestamp(times.get("error")) if info.status == "error" else None,
        "completed_segments": done,
        "total_segments": total,
    }


def segment(stored: StoredSegment) -> dict[str, Any]:
    item = stored.segment
    created = seconds(stored.created_at)
    return {
        "id": item.id,
        "position": item.position + 1,
        "document_id": item.document_id,
        "content": item.content,
        "answer": item.answer,
        "word_count": len(item.content) + len(item.answer or ""),
        "tokens": item.tokens,
        "keywords": list(item.keywords),
        "index_node_id": item.id,
        "index_node_hash": item.hash,
        "hit_count": stored.hit_count,
        "enabled": item.enabled,
        "disabled_at": None,
        "disabled_by": None,
        "status": SEGMENT_STATUS,
        "created_by": "",
        "created_at": created,
        "indexing_at": created,
        "completed_at": created,
        "error": None,
        "stopped_at": None,
        "metadata": dict(item.metadata),
    }


def child_chunk(stored: StoredChild) -> dict[str, Any]:
    item = stored.chunk
    created = seconds(stored.created_at)
    return {
        "id": item.id,
        "segment_id": stored.segment_id,
        "position": item.position + 1,
        "content": item.content,
        "word_count": len(item.content),
        "tokens": item.tokens,
        "index_node_id": item.id,
        "index_node_hash": item.hash,
        "status": SEGMENT_STATUS,
        "created_by": "",
        "created_at": created,
        "indexing_at": created,
        "completed_at": created,
        "error": None,
        "stopped_at": None,
    }


def record(hit: Hit, stored: StoredSegment, dataset_name: str) -> dict[str, Any]:
    """One retrieval hit as Dify's hit-testing record, plus zhiku's per-method scores and ranks;
    ``score`` is the hit's relevance (0 to 1), ``fusion_score`` the score its search ranked it by
    and ``evidence`` what the relevance was estimated from; ``child_chunks`` are the children that
    matched (parent-child datasets), best first; ``summary`` is the segment's summary (summary
    index), else None."""
    return {
        "segment": {
            **segment(stored),
            "document": {"id": hit.document_id, "data_source_type": "upload_file", "name": hit.document_name},
        },
        "child_chunks": [
            {"id": c.id, "content": c.content, "position": c.position + 1, "score": c.score}
            for c in hit.child_chunks
        ],
        "summary": hit.summary,
        "score": hit.score,
        "tsne_position": None,
        "scores": dict(hit.scores),
        "ranks": dict(hit.ranks),
        "fusion_score": hit.fusion_score,
        "evidence": dict(hit.evidence),
        "dataset": {"id": hit.dataset_id, "name": dataset_name},
    }
