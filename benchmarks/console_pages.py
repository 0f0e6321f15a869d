"""Server time of each console page at 10k segments (target: ≤ 150 ms p50 each) or 10k
documents (target: ≤ 100 ms p95 each).

    python benchmarks/console_pages.py                     # 10,000 segments, 20 rounds
    python benchmarks/console_pages.py --segments 50000 --rounds 10 --json console.json
    python benchmarks/console_pages.py --documents 10000   # 10,000 documents of one segment

In process, in a temporary data directory: one dataset of ``--segments`` segments (in
``--documents`` documents, 100 unless given; the synthetic embedding model, so building it
takes seconds), a signed-in console
session, then every page requested ``--rounds`` times through the WSGI app (Flask's test
client: the whole request — session and key check, SQL, template — without the network). The
hit-testing run is a hybrid search (semantic + BM25) plus its page.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

import zhiku.benchmarking  # noqa: E402,F401  (registers the "synthetic" embedding model)
from zhiku.api import create_app  # noqa: E402
from zhiku.benchmarking.corpus import build_corpus  # noqa: E402
from zhiku.core.config import Settings  # noqa: E402
from zhiku.core.documents import Chunk  # noqa: E402
from zhiku.knowledge_base import KnowledgeBase  # noqa: E402

TARGET_MS = 150.0
MANY_DOCUMENTS_TARGET_MS = 100.0
DOCUMENTS = 100
_TOKEN = re.compile(r'name="csrf-token" content="([^"]+)"')


def build(
    home: Path, segments: int, documents_count: int = DOCUMENTS
) -> tuple[KnowledgeBase, str, list[str]]:
    kb = KnowledgeBase(Settings.load(home, embedding_model="synthetic"))
    corpus = build_corpus(segments, 20)
    dataset = kb.create_dataset("bench", embedding_model="synthetic")
    per_document = -(-segments // documents_count)
    documents = []
    for number, start in enumerate(range(0, segments, per_document)):
        texts = corpus.texts[start : start + per_document]
        chunks = [
            Chunk(text, position, len(text) // 2, {"page": 1 + position // 10})
            for position, text in enumerate(texts)
        ]
        documents.append((f"document-{number:03d}.txt", chunks))
    dataset.add_chunks(documents)
    return kb, dataset.id, corpus.queries


def measure(
    kb: KnowledgeBase, dataset_id: str, queries: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    app = create_app(kb.settings, kb, workers=False)
    client = app.test_client()
    _, secret = app.extensions["zhiku"].keys.create(name="bench")
    token = _TOKEN.search(client.get("/signin").get_data(as_text=True)).group(1)  # type: ignore[union-attr]
    assert client.post("/signin", data={"secret": secret, "csrf_token": token}).status_code == 302
    page = client.get(f"/datasets/{dataset_id}/segments").get_data(as_text=True)
    token = _TOKEN.search(page).group(1)  # type: ignore[union-attr]
    segment = re.search(r'data-segment="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    base = f"/datasets/{dataset_id}"
    document = re.search(r'data-document="([^"]+)"', client.get(base).get_data(as_text=True)).group(1)  # type: ignore[union-attr]
    text = "\n\n".join(queries[:200]).encode()  # a file of a few pages to preview
    pages: dict[str, Any] = {
        "datasets": lambda _: client.get("/datasets"),
        "documents": lambda _: client.get(base),
        "documents (progress rows)": lambda _: client.get(f"{base}/rows"),
        "documents, page 100": lambda _: client.get(f"{base}?page=100"),
        "segments": lambda _: client.get(f"{base}/segments"),
        "segments, page 100": lambda _: client.get(f"{base}/segments?page=100"),
        "segments, text search": lambda q: client.get(f"{base}/segments", query_string={"keyword": q[:8]}),
        "segment": lambda _: client.get(f"{base}/segments/{segment}"),
        "document": lambda _: client.get(f"{base}/documents/{document}"),
        "chunk preview": lambda _: client.post(
            f"{base}/preview", data={"file": (io.BytesIO(text), "preview.txt"), "csrf_token": token}
        ),
        "settings": lambda _: client.get(f"{base}/settings"),
        "hit testing (form)": lambda _: client.get(f"{base}/hit-testing"),
        "hit testing (run, hybrid)": lambda q: client.post(
            f"{base}/hit-testing", data={"query": q, "csrf_token": token}
        ),
        "chat (page)": lambda _: client.get("/chat"),
        "api access": lambda _: client.get("/api-access"),
    }
    results = {}
    for name, request in pages.items():
        for query in queries[:3]:  # warm-up: caches, first compilation of templates
            assert request(query).status_code == 200, name
        times = []
        for round_number in range(rounds):
            query = queries[round_number % len(queries)]
            started = time.perf_counter()
            response = request(query)
            times.append((time.perf_counter() - started) * 1000.0)
            assert response.status_code == 200, name
        p50, p95 = np.percentile(np.asarray(times), [50, 95])
        results[name] = {"p50_ms": round(float(p50), 2), "p95_ms": round(float(p95), 2), "n": rounds}
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument(
        "--documents",
        type=int,
        help="documents the segments are spread over (default 100); "
        "given, the target is p95 <= 100 ms and there are at least as many segments",
    )
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    documents = args.documents or DOCUMENTS
    segments = max(args.segments, documents)
    # many documents: every page paginated must stay fast at its slowest, not only typically
    figure, target = ("p95_ms", MANY_DOCUMENTS_TARGET_MS) if args.documents else ("p50_ms", TARGET_MS)
    with tempfile.TemporaryDirectory(prefix="zhiku-console-bench-") as directory:
        started = time.perf_counter()
        kb, dataset_id, queries = build(Path(directory) / "home", segments, documents)
        built = time.perf_counter() - started
        try:
            results = measure(kb, dataset_id, queries, args.rounds)
        finally:
            kb.close()
    print(
        f"console pages at {segments} segments ({documents} documents, built in {built:.1f} s), "
        f"server time over {args.rounds} requests each; target {figure[:3]} <= {target:g} ms"
    )
    print(f"{'page':32} {'p50 ms':>8} {'p95 ms':>8}")
    for name, figures in results.items():
        flag = "" if figures[figure] <= target else "  over target"
        print(f"{name:32} {figures['p50_ms']:8.1f} {figures['p95_ms']:8.1f}{flag}")
    if args.json:
        args.json.write_text(
            json.dumps({"segments": segments, "documents": documents, "pages": results}, indent=2)
        )


if __name__ == "__main__":
    main()
