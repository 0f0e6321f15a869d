"""Reading an evaluation set in the BEIR-like layout (corpus.jsonl, queries.jsonl, qrels.tsv, ...)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from zhiku.core.errors import InvalidInput


@dataclass
class Passage:
    id: str
    title: str
    text: str
    doc: str

    @property
    def content(self) -> str:
        """What passage mode indexes: title and text, as BEIR does."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass
class EvalSet:
    name: str
    root: Path
    passages: list[Passage]
    queries: dict[str, str]
    qrels: dict[str, set[str]]
    qrels_docs: dict[str, set[str]]
    answers: dict[str, list[str]] = field(default_factory=dict)

    @property
    def docs_dir(self) -> Path:
        return self.root / "docs"


def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _read_qrels(path: Path) -> dict[str, set[str]]:
    qrels: dict[str, set[str]] = {}
    if not path.is_file():
        return qrels
    with path.open(encoding="utf-8") as handle:
        reader = csv.reader(handle, delimiter="\t")
        next(reader, None)
        for row in reader:
            if len(row) >= 3 and float(row[2]) > 0:
                qrels.setdefault(row[0], set()).add(row[1])
    return qrels


def load_eval_set(root: str | Path, limit_queries: int | None = None) -> EvalSet:
    """Load a set directory; ``limit_queries`` keeps the first N judged queries (for quick runs)."""
    path = Path(root)
    if not (path / "corpus.jsonl").is_file() or not (path / "queries.jsonl").is_file():
        raise InvalidInput(f"{path} is not an evaluation set (needs corpus.jsonl and queries.jsonl)")
    passages = [
        Passage(id=str(r["_id"]), title=r.get("title") or "", text=r["text"], doc=str(r.get("doc", r["_id"])))
        for r in _read_jsonl(path / "corpus.jsonl")
    ]
    qrels = _read_qrels(path / "qrels.tsv")
    queries = {
        str(r["_id"]): r["text"] for r in _read_jsonl(path / "queries.jsonl") if str(r["_id"]) in qrels
    }
    if limit_queries is not None:
        queries = dict(list(queries.items())[:limit_queries])
    answers: dict[str, list[str]] = {}
    if (path / "answers.jsonl").is_file():
        answers = {str(r["_id"]): list(r["answers"]) for r in _read_jsonl(path / "answers.jsonl")}
    return EvalSet(
        name=path.resolve().name,
        root=path,
        passages=passages,
        queries=queries,
        qrels=qrels,
        qrels_docs=_read_qrels(path / "qrels_docs.tsv"),
        answers=answers,
    )


#: Questions of other sets an evaluation also asks a set (see :func:`sibling_sets`).
FOREIGN_QUESTIONS = 300


def sibling_sets(root: str | Path) -> list[Path]:
    """The other evaluation sets in the folder that holds ``root`` (sorted by name): where the
    questions that ``root``'s corpus cannot answer come from by default."""
    path = Path(root).resolve()
    return sorted(
        other
        for other in path.parent.iterdir()
        if other != path and (other / "corpus.jsonl").is_file() and (other / "queries.jsonl").is_file()
    )
