"""What parsing in a child process costs a normal ingest: documents per second of ``add_files``
on a few hundred small files (text, Markdown, HTML, DOCX, CSV, XLSX, PDF), with
``parse_in_child_process`` on and off, run in turn ``--repeat`` times (the median of each shown,
so a change in the machine's load weighs on both alike).

    python benchmarks/parse_isolation.py --files 300 --repeat 3 --json parse.json

The embedding model is the synthetic one (no model to load: the parse and the pipe are a larger
part of each document). ``cpu_s`` is this process's CPU time only: with the child on, the
parse's own CPU is the child's and is not in it. The time from a DELETE to a hostile parse
stopping is ``benchmarks/security_figures.py --only delete_to_stop``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmark this checkout

import zhiku.benchmarking  # noqa: E402, F401 - registers the synthetic embedding model
from tests.fixtures.make_files import make_csv, make_docx, make_pdf, make_text, make_xlsx  # noqa: E402
from zhiku import KnowledgeBase  # noqa: E402

SENTENCE = "青山茶园的明前龙井在清明前采摘，滋味鲜爽。The tea garden picks Longjing before Qingming."


def small_files(root: Path, count: int) -> list[Path]:
    """``count`` files of a few KB each, the formats in turn, no two alike."""
    root.mkdir(parents=True, exist_ok=True)
    files: list[Path] = []
    for n in range(count):
        lines = [f"{n}-{line} {SENTENCE}" for line in range(12)]
        rows: list[list[object]] = [["id", "note"], *([i, line] for i, line in enumerate(lines))]
        kind = n % 7
        if kind == 0:
            files.append(make_text(root / f"{n}.txt", "\n\n".join(lines)))
        elif kind == 1:
            files.append(make_text(root / f"{n}.md", f"# 第{n}篇\n\n" + "\n\n".join(lines)))
        elif kind == 2:
            body = "".join(f"<p>{line}</p>" for line in lines)
            files.append(make_text(root / f"{n}.html", f"<html><body><h1>{n}</h1>{body}</body></html>"))
        elif kind == 3:
            files.append(make_docx(root / f"{n}.docx", intro=lines))
        elif kind == 4:
            files.append(make_csv(root / f"{n}.csv", rows))
        elif kind == 5:
            files.append(make_xlsx(root / f"{n}.xlsx", {"notes": rows}))
        else:
            files.append(make_pdf(root / f"{n}.pdf", lines[:4]))
    return files


def ingest(home: Path, files: list[Path], in_child: bool) -> dict[str, float]:
    with KnowledgeBase.open(home, parse_in_child_process=in_child) as kb:
        dataset = kb.create_dataset("bench", embedding_model="synthetic")
        started, cpu = time.perf_counter(), time.process_time()
        infos = dataset.add_files(files)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    failed = [info for info in infos if info.status != "completed"]
    if failed:
        raise SystemExit(f"{failed[0].name}: {failed[0].error}")
    rate = round(len(files) / seconds, 1)
    return {"seconds": round(seconds, 2), "docs_per_s": rate, "cpu_s": round(cpu, 2)}


def run(count: int, repeat: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, float]]] = {"in_process": [], "child_process": []}
    with tempfile.TemporaryDirectory(prefix="zhiku-parse-isolation-") as tmp:
        files = small_files(Path(tmp) / "files", count)
        for round_ in range(repeat):
            for label in runs:
                home = Path(tmp) / f"{label}-{round_}"
                runs[label].append(ingest(home, files, label == "child_process"))
                print(f"{label} run {round_ + 1}: {runs[label][-1]}", file=sys.stderr, flush=True)
    median = {label: statistics.median(r["docs_per_s"] for r in rows) for label, rows in runs.items()}
    return {"files": count, "runs": runs, "median_docs_per_s": median}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    text = json.dumps(run(args.files, args.repeat), indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
