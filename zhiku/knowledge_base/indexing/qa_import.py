"""Question/answer pairs indexed as one document without an LLM, given directly or read from a
CSV file: questions are indexed, answers returned beside them (as in a ``qa_model`` dataset)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Sequence
from pathlib import Path

from zhiku.core.document_status import DocumentStatus
from zhiku.core.documents import Segment, content_hash, segment_id
from zhiku.core.errors import InvalidInput, ZhikuError
from zhiku.knowledge_base.context import DatasetContext
from zhiku.knowledge_base.indexing.dataset_index import DocumentVersion
from zhiku.knowledge_base.indexing.ingestion import Ingestion, Source, new_document
from zhiku.knowledge_base.indexing.pipeline import Pipeline

#: First rows that name the two columns without saying ``question``/``answer``.
_HEADERS = (["q", "a"], ["问题", "答案"], ["问", "答"])


def read_qa_csv(path: Path) -> list[tuple[str, str]]:
    """Pairs from columns ``question`` and ``answer`` found by header, else the first two columns
    (a first row that reads as a header is skipped). UTF-8 (with or without BOM) or GB18030,
    the two encodings spreadsheet programs write Chinese CSV in."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"{path.name}: cannot read: {exc.strerror or exc}") from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        try:
            text = raw.decode("gb18030")
        except UnicodeDecodeError as exc:
            raise InvalidInput(f"{path.name}: not UTF-8 or GB18030 text") from exc
    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if not rows:
        raise InvalidInput(f"{path.name}: empty CSV")
    header = [cell.strip().lower() for cell in rows[0]]
    if "question" in header and "answer" in header:
        q, a = header.index("question"), header.index("answer")
        body = rows[1:]
    else:
        q, a = 0, 1
        body = rows[1:] if header[:2] in _HEADERS else rows
    too_short = [number for number, row in enumerate(body, start=1) if len(row) <= max(q, a)]
    if too_short:
        raise InvalidInput(f"{path.name}: row {too_short[0]} has no answer column")
    return [(row[q], row[a]) for row in body]


def index_qa_pairs(
    context: DatasetContext,
    dataset_id: str,
    pipeline: Callable[[], Pipeline],
    name: str,
    pairs: Sequence[tuple[str, str]],
) -> str:
    """Index ``pairs`` as one document named ``name`` (pairs missing a part are left out);
    returns its id. InvalidInput when no pair has both parts."""
    clean = [(q.strip(), a.strip()) for q, a in pairs if q and q.strip() and a and a.strip()]
    if not clean:
        raise InvalidInput(f"{name}: no question/answer pair with both parts filled")
    source = Source(name, b"", "qa_pairs")
    document_id = new_document(context, dataset_id, source, status=DocumentStatus.INDEXING)
    segments = [
        Segment(
            id=segment_id(document_id, position, question),
            document_id=document_id,
            position=position,
            content=question,
            tokens=0,
            hash=content_hash(question),
            answer=answer,
            metadata={"chunk_position": position, "pair_index": 0},
        )
        for position, (question, answer) in enumerate(clean)
    ]
    Ingestion(context, dataset_id, pipeline()).write_version(DocumentVersion(document_id, segments))
    return document_id


def index_qa_csv(
    context: DatasetContext, dataset_id: str, pipeline: Callable[[], Pipeline], path: Path
) -> str:
    """Index the pairs of a CSV file (see :func:`read_qa_csv`) as one document; returns its id.
    A bad file does not raise: its document ends ``error`` with the reason."""
    try:
        return index_qa_pairs(context, dataset_id, pipeline, path.name, read_qa_csv(path))
    except ZhikuError as exc:  # its messages name the file
        document_id = new_document(context, dataset_id, Source.file(path))
        context.states.fail(document_id, str(exc))
        return document_id
