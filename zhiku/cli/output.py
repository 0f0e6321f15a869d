"""Printing for people and for scripts: the ``--json`` flag, the JSON shapes of datasets, documents
and segments (their keys are stable: scripts rely on them), and the one-line forms people read."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any, TypeVar

import click

from zhiku.knowledge_base import Dataset, DocumentInfo
from zhiku.knowledge_base.indexing.segments import StoredSegment
from zhiku.retrieval.relevance import Calibration

F = TypeVar("F", bound=Callable[..., Any])


def json_option(command: F) -> F:
    """The ``--json`` flag (parameter ``as_json``): one JSON document on stdout instead of text."""
    return click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON document on stdout (for scripts)."
    )(command)


def print_json(data: Any, *, indent: int | None = 2) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=indent, default=_json_value))


def notice(message: str) -> None:
    """A line about what a command did on the way (stderr, so ``--json`` stdout stays one document)."""
    click.echo(message, err=True)


def _json_value(value: object) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def one_line(text: str, width: int = 100) -> str:
    """``text`` on one line, cut at ``width`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if value is not None else "—"


# -- datasets --------------------------------------------------------------------------------------


def dataset_json(dataset: Dataset) -> dict[str, Any]:
    """A dataset's settings and counts (what ``dataset show`` prints)."""
    return {
        "id": dataset.id,
        "name": dataset.name,
        "description": dataset.description,
        "embedding_model": dataset.embedding_model,
        "retrieval": dataset.retrieval.model_dump(),
        "process_rule": dataset.process_rule.model_dump(),
        **dataset.stats(),
    }


def calibration_json(calibration: Calibration) -> dict[str, Any]:
    """How a dataset's relevance is scored: the file read (or why none was), the evidence read."""
    return {
        "source": calibration.source,
        "embedding_model": calibration.embedding_model,
        "fitted_on": list(calibration.fitted_on),
        "reads": list(calibration.reads),
    }


# -- documents -------------------------------------------------------------------------------------


def document_json(info: DocumentInfo, words: int) -> dict[str, Any]:
    """A document as ``document list`` gives it."""
    return {
        "id": info.id,
        "name": info.name,
        "status": info.status,
        "enabled": info.enabled,
        "error": info.error,
        "segment_count": info.segment_count,
        "token_count": info.token_count,
        "word_count": words,
        "created_at": info.created_at,
    }


def document_detail_json(info: DocumentInfo, words: int) -> dict[str, Any]:
    """A document as ``document show`` gives it: the list's keys, where it came from, when each
    stage started, and the chunks that failed (``document retry`` redoes only those)."""
    return {
        **document_json(info, words),
        "file_hash": info.file_hash,
        "source": info.source,
        "size": info.size,
        "stage_times": info.stage_times,
        "failed_chunks": [
            {"position": chunk["position"], "reason": chunk["reason"], "content": chunk["content"]}
            for chunk in info.metadata.get("failed_chunks") or []
        ],
    }


def document_line(info: DocumentInfo) -> str:
    state = "" if info.enabled else "  [disabled]"
    error = f"  — {info.error}" if info.error else ""
    return f"{info.id}  {info.status:9} {info.segment_count:5} seg  {info.name}{state}{error}"


# -- segments --------------------------------------------------------------------------------------


def segment_json(stored: StoredSegment, document_name: str) -> dict[str, Any]:
    segment = stored.segment
    return {
        "id": segment.id,
        "document_id": segment.document_id,
        "document_name": document_name,
        "position": segment.position,
        "content": segment.content,
        "answer": segment.answer,
        "keywords": list(segment.keywords),
        "tokens": segment.tokens,
        "hash": segment.hash,
        "enabled": segment.enabled,
        "created_at": stored.created_at,
    }


def segment_line(stored: StoredSegment, document_name: str) -> str:
    segment = stored.segment
    state = "" if segment.enabled else " [disabled]"
    return f"{segment.id}  {document_name} #{segment.position}{state}  {one_line(segment.content, 80)}"


def echo_segment(stored: StoredSegment, document_name: str) -> None:
    """A segment in full, for people."""
    segment = stored.segment
    click.echo(f"segment   {segment.id}")
    click.echo(f"document  {document_name} ({segment.document_id}), position {segment.position}")
    click.echo(f"state     {'enabled' if segment.enabled else 'disabled'}, {segment.tokens} tokens")
    click.echo(f"keywords  {', '.join(segment.keywords) or '—'}")
    click.echo(f"created   {when(stored.created_at)}")
    click.echo("")
    click.echo(segment.content)
    if segment.answer:
        click.echo("")
        click.echo(f"→ {segment.answer}")
