"""Indexing throughput with 1, 2 and 4 Celery workers (``zhiku worker``) behind one ``zhiku serve``.

The embedding model is an OpenAI-compatible server on 127.0.0.1 that answers each batch after a
fixed delay — a stand-in for a remote GPU embedding server, whose latency, not this machine's
CPU, bounds one worker — so the run shows how far adding workers multiplies the rate. The
stores are the embedded default: the workers extract, split and embed, and the serving process
writes every version (the single writer). Needs a Redis server for the broker::

    make bench-workers                       # starts a throwaway Redis, then runs this
    ZHIKU_TEST_REDIS_URL=redis://127.0.0.1:6379/0 python benchmarks/worker_throughput.py --json out.json

Each worker count gets a new temporary data directory and an emptied Redis database.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

import redis  # noqa: E402
from sqlalchemy import create_engine, func, select  # noqa: E402

from tests.fixtures.embedding_server import SlowEmbeddingServer  # noqa: E402
from tests.fixtures.scaleout import ServerChild, celery_env, cli, start_worker  # noqa: E402
from zhiku.core.config import Settings  # noqa: E402
from zhiku.core.db.models import DocumentRow, SegmentRow  # noqa: E402
from zhiku.knowledge_base import KnowledgeBase  # noqa: E402

DIM = 64


def _document(number: int, paragraphs: int) -> str:
    return "\n\n".join(
        f"Note {number}.{p}: leaf batch {number} from garden {p % 97} was rolled, dried and sorted."
        for p in range(paragraphs)
    )


def measure(
    workers: int, *, broker_url: str, documents: int, paragraphs: int, delay: float, batch: int, root: Path
) -> dict[str, Any]:
    """Index ``documents`` through the API with ``workers`` workers; chunks per second."""
    redis.Redis.from_url(broker_url).flushdb()
    home = root / f"workers{workers}"
    env = celery_env(broker_url)
    cli(home, "init", env=env)
    key = cli(home, "apikey", "create", "--name", "bench", env=env).strip()
    with SlowEmbeddingServer(delay_s=delay, dim=DIM) as embedder:
        options = {"base_url": embedder.base_url, "model": "slow", "dim": DIM, "batch_size": batch}
        with KnowledgeBase.open(home) as kb:
            dataset = kb.create_dataset("bench", embedding_model="openai", embedding_options=options).id
        server = ServerChild(home, env, root / f"serve{workers}.log")
        children = [
            start_worker(home, env, root / f"worker{workers}-{n}.log", f"bench{n}@%h") for n in range(workers)
        ]
        engine = create_engine(Settings.load(home).resolved_database_url)
        try:
            deadline = time.monotonic() + 120
            while not all("ready." in child.log.read_text() for child in children):
                assert time.monotonic() < deadline, "workers did not start"
                time.sleep(0.1)
            started = time.perf_counter()
            with server.client(key) as client:
                for number in range(documents):
                    response = client.post(
                        f"/datasets/{dataset}/document/create-by-text",
                        json={
                            "name": f"doc{number}",
                            "text": _document(number, paragraphs),
                            "process_rule": {"separator": "\n\n", "max_tokens": 40, "chunk_overlap": 0},
                        },
                    )
                    response.raise_for_status()
            while True:
                with engine.connect() as connection:
                    done = connection.scalar(
                        select(func.count()).where(DocumentRow.status.in_(["completed", "error"]))
                    )
                if done == documents:
                    break
                time.sleep(0.05)
            elapsed = time.perf_counter() - started
            with engine.connect() as connection:
                chunks = int(connection.scalar(select(func.count()).select_from(SegmentRow)) or 0)
                failed = connection.scalar(select(func.count()).where(DocumentRow.status == "error"))
        finally:
            for child in children:
                child.stop()
            server.stop()
            engine.dispose()
    return {
        "workers": workers,
        "documents": documents,
        "chunks": chunks,
        "failed_documents": int(failed or 0),
        "seconds": round(elapsed, 2),
        "chunks_per_s": round(chunks / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--documents", type=int, default=48)
    parser.add_argument("--paragraphs", type=int, default=16, help="paragraphs (chunks) per document")
    parser.add_argument("--delay", type=float, default=0.25, help="seconds the server takes per batch")
    parser.add_argument("--batch", type=int, default=16, help="texts per embedding request")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    broker_url = os.environ.get("ZHIKU_BENCH_REDIS_URL") or os.environ.get("ZHIKU_TEST_REDIS_URL")
    if not broker_url:
        sys.exit("set ZHIKU_BENCH_REDIS_URL (or run `make bench-workers`, which starts a Redis)")
    with tempfile.TemporaryDirectory(prefix="zhiku-workers-") as tmp:
        results = [
            measure(
                n,
                broker_url=broker_url,
                documents=args.documents,
                paragraphs=args.paragraphs,
                delay=args.delay,
                batch=args.batch,
                root=Path(tmp),
            )
            for n in args.workers
        ]
    base = results[0]["chunks_per_s"]
    print(f"embedding server: {args.delay:g} s per batch of {args.batch}; {args.documents} documents")
    print(f"{'workers':>7} {'chunks':>7} {'seconds':>8} {'chunks/s':>9} {'ratio':>6}")
    for result in results:
        result["ratio"] = round(result["chunks_per_s"] / base, 2)
        print(
            f"{result['workers']:>7} {result['chunks']:>7} {result['seconds']:>8} "
            f"{result['chunks_per_s']:>9} {result['ratio']:>5}x"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
