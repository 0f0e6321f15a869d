"""A metadata filter's own time: the typed values table against the JSON it replaced.

    python benchmarks/metadata_filter.py                     # 10,000 documents, 300 rounds
    python benchmarks/metadata_filter.py --documents 100000 --rounds 100
    python benchmarks/metadata_filter.py --block 50          # 50 calls of one, then of the other

One dataset of N document rows, each with a number field ``bucket`` (position % 100) written
through the metadata API; filters keeping 10% (``bucket < 10``), 1% (``bucket < 1``) and 90%
(``bucket ≥ 10``: the scope lists the 10% left out) of the documents. Each round times
``DatasetMetadata.scope`` and the previous answer (SQL over each document's JSON
``metadata_values``, kept in the tests as the new answer's oracle) alternately, each starting
from a dataset read and the filter's check, as ``scope`` does. Prints p50 and mean per filter
and the ratio of the two p50s; no search runs, the scope alone is timed. Alternated call by call,
each call finds the caches as the other left them (the JSON reads every document row); with
``--block N`` each variant runs N calls in a row, closer to a filter timed on its own.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import insert

from zhiku import KnowledgeBase
from zhiku.core.db import DatasetRow, DocumentRow
from zhiku.core.metadata import MetadataField, MetadataFilter, check_filter
from zhiku.core.scope import DocumentScope
from zhiku.knowledge_base.dataset import Dataset

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.knowledge_base.json_metadata_oracle import json_scope  # noqa: E402

FILTERS = {"10%": ("<", 10), "1%": ("<", 1), "90%": ("≥", 10)}


def build(kb: KnowledgeBase, documents: int) -> Dataset:
    """A dataset of ``documents`` rows (no segments: the filter reads documents only)."""
    dataset = kb.create_dataset("metadata-filter-bench")
    with kb.sessions.begin() as session:
        session.execute(
            insert(DocumentRow),
            [
                {
                    "id": str(uuid.uuid4()),
                    "dataset_id": dataset.id,
                    "name": f"doc-{i}.txt",
                    "source": "",
                    "status": "completed",
                    "doc_metadata": {},
                    "metadata_values": {},
                }
                for i in range(documents)
            ],
        )
    dataset.metadata.add_field("bucket", "number")
    ids = sorted(info.id for info in dataset.documents())
    dataset.metadata.set_many({doc: {"bucket": i % 100} for i, doc in enumerate(ids)})
    return dataset


def json_answer(kb: KnowledgeBase, dataset_id: str, where: MetadataFilter) -> DocumentScope:
    """The previous ``scope``: the dataset read, the filter checked, SQL over the JSON."""
    with kb.sessions() as session:
        row = session.get(DatasetRow, dataset_id)
        assert row is not None
        fields = {f["name"]: MetadataField.model_validate(f) for f in row.metadata_fields}
        checked = check_filter(where, fields, builtin=row.builtin_metadata)
        return json_scope(session, dataset_id, checked, where.logical_operator)


def run(home: Path, documents: int, rounds: int, block: int = 1) -> dict[str, Any]:
    """Milliseconds per filter and variant: ``{"10%": {"table": {...}, "json": {...}}, ...}``;
    ``rounds`` calls of each, ``block`` calls of one variant at a time."""
    result: dict[str, Any] = {"documents": documents, "rounds": rounds, "block": block, "filters": {}}
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset = build(kb, documents)
        for name, (operator, value) in FILTERS.items():
            where = MetadataFilter.model_validate(
                {"conditions": [{"name": "bucket", "comparison_operator": operator, "value": value}]}
            )
            variants = {
                "table": lambda where=where: dataset.metadata.scope(where),
                "json": lambda where=where: json_answer(kb, dataset.id, where),
            }
            table = variants["table"]()
            # the same documents; the table's scope also tests the payload once the dataset's
            # values are in its points (written in the background: maybe not yet)
            assert table is not None and table.with_payload_filter(None) == variants["json"](), name
            times: dict[str, list[float]] = {variant: [] for variant in variants}
            for i in range(0, rounds, block):
                for variant in sorted(variants, reverse=bool(i // block % 2)):
                    for _ in range(min(block, rounds - i)):
                        start = time.perf_counter()
                        variants[variant]()
                        times[variant].append((time.perf_counter() - start) * 1000)
            result["filters"][name] = {
                variant: {"p50": statistics.median(t), "mean": statistics.fmean(t)}
                for variant, t in times.items()
            }
    return result


def report_lines(result: dict[str, Any]) -> list[str]:
    lines = [
        f"metadata filter at {result['documents']:,} documents, {result['rounds']} rounds "
        f"in blocks of {result['block']} (ms)"
    ]
    for name, variants in result["filters"].items():
        table, old = variants["table"], variants["json"]
        lines.append(
            f"  {name:>4} filter: table p50 {table['p50']:.3f} mean {table['mean']:.3f} | "
            f"json p50 {old['p50']:.3f} mean {old['mean']:.3f} | {old['p50'] / table['p50']:.1f}× faster"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--block", type=int, default=1, help="calls of one variant in a row")
    parser.add_argument("--home", type=Path, default=None, help="data directory (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        result = run(args.home or Path(scratch), args.documents, args.rounds, max(1, args.block))
    print("\n".join(report_lines(result)))


if __name__ == "__main__":
    main()
