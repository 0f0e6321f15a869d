"""Indexing throughput with 1, 2 and 4 Celery workers (``zhiku worker``) behind one ``zhiku serve``.

The embedding model is an OpenAI-compatible server on 127.0.0.1 that answers each batch after a
fixed delay — a stand-in for a remote GPU embedding server, whose latency, not this machine's
CPU, bounds one worker — so the run shows how far adding workers multiplies the rate. The
stores are the embedded default: the workers extract, split and embed, and the serving process
writes every version (the single writer).

Each worker first indexes one warm-up document (a new process imports the ingest path and its
HTTP client on its first task: 0.6 s, over 1 s on a loaded machine), not counted. Then the
documents are queued through the API while the workers take no tasks (Celery's
``cancel_consumer``), every worker starts taking tasks at once (``add_consumer``) and the clock
runs until the last document is written. So the rate is the workers' and the writer's,
not that of the one client sending the documents (reported apart, ``queueing s``); ``cpu s`` is
the CPU time the server and the workers used while the clock ran. Needs a Redis server for the
broker::

    make bench-workers                       # starts a throwaway Redis, then runs this
    ZHIKU_TEST_REDIS_URL=redis://127.0.0.1:6379/0 python benchmarks/worker_throughput.py --json out.json

Each run gets a new temporary data directory and an emptied Redis database; the worker counts
are run in turn ``--repeat`` times and the median run of each is shown, so a change in the
machine's load during the benchmark weighs on every count alike.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

import httpx  # noqa: E402
import psutil  # noqa: E402
import redis  # noqa: E402
from celery import Celery  # noqa: E402
from sqlalchemy import Engine, create_engine, func, select  # noqa: E402

from tests.fixtures.embedding_server import SlowEmbeddingServer  # noqa: E402
from tests.fixtures.scaleout import ServerChild, celery_env, cli, start_worker  # noqa: E402
from zhiku.core.config import Settings  # noqa: E402
from zhiku.core.db.models import DocumentRow, SegmentRow  # noqa: E402
from zhiku.knowledge_base import KnowledgeBase  # noqa: E402
from zhiku.knowledge_base.runtime.celery_queue import QUEUE, celery_app  # noqa: E402

DIM = 64


def _document(number: int, paragraphs: int) -> str:
    return "\n\n".join(
        f"Note {number}.{p}: leaf batch {number} from garden {p % 97} was rolled, dried and sorted."
        for p in range(paragraphs)
    )


def _cpu_seconds(pids: list[int]) -> float:
    """CPU time (user + system) these processes have used so far."""
    return sum(float(sum(psutil.Process(pid).cpu_times()[:2])) for pid in pids)


def _queue(client: httpx.Client, dataset: str, documents: int, paragraphs: int, first: int = 0) -> None:
    for number in range(first, first + documents):
        response = client.post(
            f"/datasets/{dataset}/document/create-by-text",
            json={
                "name": f"doc{number}",
                "text": _document(number, paragraphs),
                "process_rule": {"separator": "\n\n", "max_tokens": 40, "chunk_overlap": 0},
            },
        )
        response.raise_for_status()


def _wait_done(engine: Engine, documents: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with engine.connect() as connection:
            finished = DocumentRow.status.in_(["completed", "error"])
            done = connection.scalar(select(func.count()).where(finished))
        if done == documents:
            return
        assert time.monotonic() < deadline, f"{done} of {documents} documents done after {timeout} s"
        time.sleep(0.05)


def _consumers(app: Celery, names: list[str], *, add: bool) -> None:
    """Make every worker stop or start taking tasks from the indexing queue (remote control)."""
    control = app.control.add_consumer if add else app.control.cancel_consumer
    replies = control(QUEUE, reply=True, destination=names, timeout=30) or []
    assert len(replies) == len(names), f"{len(replies)} of {len(names)} workers answered: {replies}"


def measure(
    workers: int, *, broker_url: str, documents: int, paragraphs: int, delay: float, batch: int, root: Path
) -> dict[str, Any]:
    """Queue ``documents`` through the API, then let ``workers`` workers drain the queue at once;
    chunks per second from their start to the last document written."""
    redis.Redis.from_url(broker_url).flushdb()
    home = root / f"workers{workers}"
    env = celery_env(broker_url)
    cli(home, "init", env=env)
    key = cli(home, "apikey", "create", "--name", "bench", env=env).strip()
    names = [f"bench{n}@{socket.gethostname()}" for n in range(workers)]
    with SlowEmbeddingServer(delay_s=delay, dim=DIM) as embedder:
        options = {"base_url": embedder.base_url, "model": "slow", "dim": DIM, "batch_size": batch}
        with KnowledgeBase.open(home) as kb:
            dataset = kb.create_dataset("bench", embedding_model="openai", embedding_options=options).id
        server = ServerChild(home, env, root / f"serve{workers}.log")
        children = [
            start_worker(home, env, root / f"worker{workers}-{n}.log", name) for n, name in enumerate(names)
        ]
        settings = Settings.load(home, task_queue="celery", broker_url=broker_url)
        app = celery_app(settings)
        engine = create_engine(settings.resolved_database_url)
        pids = [server.pid, *(child.pid for child in children)]
        try:
            deadline = time.monotonic() + 120
            while not all("ready." in child.log.read_text() for child in children):
                assert time.monotonic() < deadline, "workers did not start"
                time.sleep(0.1)
            with server.client(key) as client:
                _queue(client, dataset, workers, paragraphs, first=documents)  # one warm-up each
                _wait_done(engine, workers)
                warm = sum("prepared" in child.log.read_text() for child in children)
                _consumers(app, names, add=False)
                sending = time.perf_counter()
                _queue(client, dataset, documents, paragraphs)
                sent = time.perf_counter() - sending
            cpu = _cpu_seconds(pids)
            started = time.perf_counter()
            _consumers(app, names, add=True)
            _wait_done(engine, workers + documents)
            elapsed = time.perf_counter() - started
            cpu = _cpu_seconds(pids) - cpu
            with engine.connect() as connection:
                warm_up = [f"doc{number}" for number in range(documents, documents + workers)]
                counted = DocumentRow.name.not_in(warm_up)
                chunks = int(
                    connection.scalar(
                        select(func.count()).select_from(SegmentRow).join(DocumentRow).where(counted)
                    )
                    or 0
                )
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
        "cpu_seconds": round(cpu, 2),
        "queueing_seconds": round(sent, 2),
        "workers_warmed_up": warm,
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
    parser.add_argument("--repeat", type=int, default=3, help="runs of each worker count (median shown)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    broker_url = os.environ.get("ZHIKU_BENCH_REDIS_URL") or os.environ.get("ZHIKU_TEST_REDIS_URL")
    if not broker_url:
        sys.exit("set ZHIKU_BENCH_REDIS_URL (or run `make bench-workers`, which starts a Redis)")
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="zhiku-workers-") as tmp:
        for repeat in range(args.repeat):  # interleaved: a change in the machine's load hits every count
            for n in args.workers:
                root = Path(tmp) / f"run{repeat}"
                root.mkdir(exist_ok=True)
                runs.append(
                    measure(
                        n,
                        broker_url=broker_url,
                        documents=args.documents,
                        paragraphs=args.paragraphs,
                        delay=args.delay,
                        batch=args.batch,
                        root=root,
                    )
                )
    results = [_median_run([run for run in runs if run["workers"] == n]) for n in args.workers]
    base = results[0]["chunks_per_s"]
    print(
        f"embedding server: {args.delay:g} s per batch of {args.batch}; {args.documents} documents; "
        f"median of {args.repeat} run(s)"
    )
    print(
        f"{'workers':>7} {'chunks':>7} {'seconds':>8} {'chunks/s':>9} {'ratio':>6} "
        f"{'cpu s':>6} {'queueing s':>10}  all runs, chunks/s"
    )
    for result in results:
        result["ratio"] = round(result["chunks_per_s"] / base, 2)
        print(
            f"{result['workers']:>7} {result['chunks']:>7} {result['seconds']:>8} "
            f"{result['chunks_per_s']:>9} {result['ratio']:>5}x {result['cpu_seconds']:>6} "
            f"{result['queueing_seconds']:>10}  {' '.join(str(rate) for rate in result['runs'])}"
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median rate, with every run's rate beside it."""
    ordered = sorted(runs, key=lambda run: run["chunks_per_s"])
    return {**ordered[(len(ordered) - 1) // 2], "runs": [run["chunks_per_s"] for run in runs]}


if __name__ == "__main__":
    main()
