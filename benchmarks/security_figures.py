"""The security figures (docs/results/speed.md), measured against a real ``zhiku serve``:

- ``held_connections``: retrieve calls per second one ordinary client gets, alone and while
  ``--half-open`` other connections have sent half a request and wait (each holds a waitress
  connection until ``api_channel_timeout``);
- ``query_cpu``: the server's CPU time per retrieve call (hybrid search, default embedding model)
  with a one-line query and with one at the longest an API query may be (4,000 characters);
- ``delete_to_stop``: for each parser, the time from the DELETE of a document being parsed to the
  indexing worker taking the next document (the parse stopped at its next checkpoint).

    python benchmarks/security_figures.py                  # all three, ~3 minutes on 2 cores
    python benchmarks/security_figures.py --only delete_to_stop --json figures.json

Offline and loopback only: a temporary data directory (under ``--home`` when given), removed at
the end. The costly files are made by the test suite's file makers, each as large as the
default parse budget lets through.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import string
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

import httpx  # noqa: E402
import psutil  # noqa: E402

from tests.fixtures.make_files import (  # noqa: E402
    make_csv,
    make_eml,
    make_epub,
    make_noise_docx,
    make_pdf,
)
from tests.fixtures.office_claims import listed_slide_pptx  # noqa: E402
from zhiku.api.local_server import LocalServer  # noqa: E402
from zhiku.api.schemas.limits import MAX_QUERY_CHARS  # noqa: E402

FIGURES = ("held_connections", "query_cpu", "delete_to_stop")
SENTENCE = "青山茶园的明前龙井在清明前采摘，滋味鲜爽。The tea garden picks Longjing before Qingming. "
Log = Callable[[str], None]
#: Seconds to wait for a deleted document's work to stop before reporting that it did not.
STOP_WAIT_S = 180.0


def _wait_indexed(client: httpx.Client, dataset: str, batch: str) -> None:
    while True:
        (state,) = client.get(f"/datasets/{dataset}/documents/{batch}/indexing-status").json()["data"]
        if state["indexing_status"] in ("completed", "error"):
            return
        time.sleep(0.1)


def _dataset(client: httpx.Client, name: str, texts: int = 20) -> str:
    """A dataset of ``texts`` short documents, indexed."""
    dataset = client.post("/datasets", json={"name": name}).raise_for_status().json()["id"]
    batches = [
        client.post(
            f"/datasets/{dataset}/document/create-by-text",
            json={"name": f"note-{n}.txt", "text": SENTENCE * (n + 1)},
        )
        .raise_for_status()
        .json()["batch"]
        for n in range(texts)
    ]
    for batch in batches:
        _wait_indexed(client, dataset, batch)
    return str(dataset)


def _rate(client: httpx.Client, dataset: str, seconds: float) -> float:
    """Retrieve calls per second one client makes, one after another, for ``seconds``."""
    calls, started = 0, time.perf_counter()
    while time.perf_counter() - started < seconds:
        client.post(f"/datasets/{dataset}/retrieve", json={"query": "龙井 Longjing"}).raise_for_status()
        calls += 1
    return calls / (time.perf_counter() - started)


def held_connections(server: LocalServer, half_open: int, seconds: float, say: Log) -> dict[str, Any]:
    """Calls per second alone, then with ``half_open`` connections holding half a request each."""
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        dataset = _dataset(client, "held")
        _rate(client, dataset, 1.0)  # warm-up
        alone = _rate(client, dataset, seconds)
        say(f"  alone: {alone:.0f} calls/s; opening {half_open} half-open connections ...")
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        held = []
        for _ in range(half_open):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"POST /v1/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n")
            held.append(sock)
        try:
            beside = _rate(client, dataset, seconds)
        finally:
            for sock in held:
                sock.close()
        after = _rate(client, dataset, seconds)  # alone again: the machine's load moves meanwhile
    return {
        "half_open_connections": half_open,
        "calls_per_s_alone": round((alone + after) / 2, 1),
        "calls_per_s_beside_them": round(beside, 1),
    }


def query_cpu(server: LocalServer, calls: int, say: Log) -> dict[str, Any]:
    """The server process's CPU seconds per retrieve call, short query against the longest."""
    process = psutil.Process(_server_pid())
    longest = (SENTENCE * (MAX_QUERY_CHARS // len(SENTENCE) + 1))[:MAX_QUERY_CHARS]
    result: dict[str, Any] = {"calls": calls, "longest_query_chars": len(longest)}
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=120) as client:
        dataset = _dataset(client, "cpu")
        for label, query in (("short", "龙井 Longjing"), ("longest", longest)):
            # each call a new query: the query embedding cache must not answer it
            bodies = [
                {"query": f"{n} {query}"[: len(query)], "retrieval_model": {"search_method": "hybrid_search"}}
                for n in range(calls + 1)
            ]
            client.post(f"/datasets/{dataset}/retrieve", json=bodies[-1]).raise_for_status()  # warm-up
            before, started = _cpu(process), time.perf_counter()
            for body in bodies[:calls]:
                client.post(f"/datasets/{dataset}/retrieve", json=body).raise_for_status()
            cpu_ms = (_cpu(process) - before) / calls * 1000
            wall_ms = (time.perf_counter() - started) / calls * 1000
            result[label] = {"cpu_ms_per_call": round(cpu_ms, 1), "wall_ms_per_call": round(wall_ms, 1)}
            say(f"  {label} query ({len(query):,} chars): {cpu_ms:.1f} ms CPU a call")
    return result


def _server_pid() -> int:
    children = [p for p in psutil.Process().children() if "serve" in " ".join(p.cmdline())]
    if len(children) != 1:
        raise RuntimeError(f"expected one zhiku serve child, found {len(children)}")
    return children[0].pid


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def costly_files(root: Path) -> dict[str, Path]:
    """One file per parser, each as costly to parse as the default budget lets through."""
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)

    def word() -> str:
        return "".join(rng.choices(string.ascii_lowercase, k=8))

    files: dict[str, Path] = {}
    text = root / "long.txt"
    text.write_text("\n".join(f"{n} {word()} {SENTENCE}" for n in range(60_000)), encoding="utf-8")
    files["txt"] = text
    html = root / "elements.html"
    html.write_text(
        "<html><body>" + "".join(f"<p>{word()}</p>" for _ in range(450_000)) + "</body></html>",
        encoding="utf-8",
    )
    files["html"] = html
    files["pdf"] = make_pdf(root / "pages.pdf", [f"{n} {SENTENCE * 4}" for n in range(1500)])
    files["docx"] = make_noise_docx(root / "paragraphs.docx", 150_000)
    rows = [[f"c{c}" for c in range(16)]] + [[word() for _ in range(16)] for _ in range(110_000)]
    files["csv"] = make_csv(root / "cells.csv", rows)
    files["xlsx"] = _xlsx(root / "cells.xlsx", rows[:60_000])
    files["pptx"] = listed_slide_pptx(root / "slides.pptx", 200_000)
    body = "".join(f"<p>{word()}</p>" for _ in range(200_000))
    files["eml"] = make_eml(
        root / "message.eml", subject="茶", text="茶", html=f"<html><body>{body}</body></html>"
    )
    chapters = [(f"第{c}章", "".join(f"<p>{word()}</p>" for _ in range(10_000))) for c in range(40)]
    files["epub"] = make_epub(root / "book.epub", title="茶书", chapters=chapters)
    return files


def _xlsx(path: Path, rows: list[list[str]]) -> Path:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("cells")
    for row in rows:
        sheet.append(row)
    book.save(str(path))
    return path


def delete_to_stop(server: LocalServer, files: dict[str, Path], say: Log) -> dict[str, Any]:
    """Per parser: DELETE its costly file while it is parsed, then time until the worker takes
    the small document queued behind it."""
    result: dict[str, Any] = {}
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=120) as client:
        dataset = client.post("/datasets", json={"name": "deletes"}).raise_for_status().json()["id"]
        for fmt, path in files.items():
            costly = _upload(client, dataset, path)
            follower = (
                client.post(
                    f"/datasets/{dataset}/document/create-by-text",
                    json={"name": f"after-{fmt}.txt", "text": f"{fmt}: {SENTENCE}"},  # not a duplicate
                )
                .raise_for_status()
                .json()["document"]["id"]
            )
            stage = _status(client, dataset, costly)
            while stage in ("waiting",):
                time.sleep(0.02)
                stage = _status(client, dataset, costly)
            time.sleep(0.5)  # well into the parse
            stage = _status(client, dataset, costly)
            deleted = time.perf_counter()
            client.delete(f"/datasets/{dataset}/documents/{costly}").raise_for_status()
            while _status(client, dataset, follower) == "waiting":
                if time.perf_counter() - deleted > STOP_WAIT_S:
                    break
                time.sleep(0.02)
            seconds = time.perf_counter() - deleted
            result[fmt] = {
                "mb": round(path.stat().st_size / 2**20, 1),
                "deleted_while": stage,
                "seconds_to_stop": round(seconds, 2),
            }
            say(f"  {fmt}: deleted while {stage}, the worker was free after {seconds:.2f} s")
    return result


def _upload(client: httpx.Client, dataset: str, path: Path) -> str:
    with path.open("rb") as handle:
        queued = client.post(
            f"/datasets/{dataset}/document/create-by-file",
            files={"file": (path.name, handle)},
            data={"data": "{}"},
        )
    return str(queued.raise_for_status().json()["document"]["id"])


def _status(client: httpx.Client, dataset: str, document: str) -> str:
    answer = client.get(f"/datasets/{dataset}/documents/{document}")
    if answer.status_code == 404:
        return "deleted"
    return str(answer.raise_for_status().json().get("indexing_status"))


def run(
    only: tuple[str, ...], half_open: int, seconds: float, calls: int, home: str | None, say: Log
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "machine": {"cpus": os.cpu_count(), "load_avg_1m": round(os.getloadavg()[0], 2)}
    }
    if home is not None:
        Path(home).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="zhiku-security-", dir=home) as tmp:
        work = Path(tmp)
        files = costly_files(work / "files") if "delete_to_stop" in only else {}
        env = {"ZHIKU_INDEXING_WORKERS": "1", "ZHIKU_UPLOAD_MAX_MB": "64"}
        with LocalServer(work / "home", env=env) as server:
            if "held_connections" in only:
                say(f"held connections ({half_open} half-open) ...")
                result["held_connections"] = held_connections(server, half_open, seconds, say)
            if "query_cpu" in only:
                say("CPU per query ...")
                result["query_cpu"] = query_cpu(server, calls, say)
            if "delete_to_stop" in only:
                say("DELETE to the work stopping, per parser ...")
                result["delete_to_stop"] = delete_to_stop(server, files, say)
    result["machine"]["load_avg_1m_end"] = round(os.getloadavg()[0], 2)
    if "delete_to_stop" in result:
        times = [item["seconds_to_stop"] for item in result["delete_to_stop"].values()]
        result["delete_to_stop_median_s"] = round(statistics.median(times), 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=FIGURES, default=list(FIGURES))
    parser.add_argument("--half-open", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=5.0, help="each rate measurement")
    parser.add_argument("--calls", type=int, default=20, help="retrieve calls per query length")
    parser.add_argument("--home", help="parent directory of the temporary data directory")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures = run(
        tuple(args.only),
        args.half_open,
        args.seconds,
        args.calls,
        args.home,
        lambda line: print(line, file=sys.stderr, flush=True),
    )
    text = json.dumps(figures, indent=2, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
