"""``zhiku demo``: build a knowledge base from the bundled corpus and search it with each method."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zhiku.core.errors import NotFound
from zhiku.knowledge_base import Dataset, KnowledgeBase

CORPUS_DIR = Path(__file__).parent / "corpus"
QUESTIONS_FILE = Path(__file__).parent / "questions.json"
DEMO_DATASET = "demo"
METHODS = ("semantic_search", "full_text_search", "keyword_search", "hybrid_search")
#: Questions the tea shop's documents cannot answer: each method answers them with nothing.
OFF_TOPIC = ("What is the capital of France?", "火星有几颗卫星？")


def load_questions() -> list[dict[str, Any]]:
    return list(json.loads(QUESTIONS_FILE.read_text(encoding="utf-8")))


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS_DIR.iterdir() if p.is_file() and p.name != "README.md")


def build_demo_dataset(kb: KnowledgeBase) -> Dataset:
    """(Re)create the ``demo`` dataset from the bundled files."""
    with contextlib.suppress(NotFound):
        kb.delete_dataset(DEMO_DATASET)
    dataset = kb.create_dataset(
        DEMO_DATASET,
        description="Qingshan Tea (青山茶业): products, brewing, policies, history — bilingual demo corpus",
        process_rule={"max_tokens": 200, "chunk_overlap": 20},
    )
    dataset.add_files(corpus_files())
    return dataset


def demo_dataset(kb: KnowledgeBase) -> Dataset:
    """The ``demo`` dataset as built from the bundled files, reused when every file is indexed
    (built again when missing, incomplete or holding other files)."""
    try:
        dataset = kb.dataset(DEMO_DATASET)
    except NotFound:
        return build_demo_dataset(kb)
    documents = dataset.documents()
    indexed = {doc.name for doc in documents if doc.status == "completed"}
    if len(documents) == len(indexed) and indexed == {path.name for path in corpus_files()}:
        return dataset
    return build_demo_dataset(kb)


def run_demo(kb: KnowledgeBase, echo: Callable[[str], None] = print) -> Dataset:
    started = time.perf_counter()
    dataset = build_demo_dataset(kb)
    documents = dataset.documents()
    echo(
        f"Built dataset '{dataset.name}' in {time.perf_counter() - started:.1f} s "
        f"(data directory {kb.settings.home}):"
    )
    for doc in documents:
        echo(
            f"  {doc.status:9} {doc.segment_count:3} segments  {doc.name}"
            + (f"  {doc.error}" if doc.error else "")
        )
    for question in [item["question"] for item in load_questions()] + list(OFF_TOPIC):
        echo("")
        echo(f"Q: {question}")
        for method in METHODS:
            hits = dataset.search(question, search_method=method, top_k=3)
            echo(f"  {method}:")
            if not hits:
                echo("    (nothing relevant found)")
            for rank, hit in enumerate(hits, start=1):
                snippet = hit.content.replace("\n", " ")[:90]
                echo(f"    {rank}. [relevance {hit.score:.3f}] {hit.document_name}: {snippet}")
    return dataset
