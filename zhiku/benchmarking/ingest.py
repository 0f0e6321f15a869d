"""Ingestion figures: chunks per second of each pipeline stage, and peak RSS of ``zhiku ingest``.

The stage clock is the one :meth:`Dataset.add_files` fills (extract, clean, split, embed,
index). Work done outside those stages (index processor, document status updates) is reported
as ``other``, so the stages and ``other`` add up to the wall time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zhiku
from zhiku.core.errors import ZhikuError
from zhiku.knowledge_base import KnowledgeBase

STAGES = ("extract", "clean", "split", "embed", "index")

#: One paragraph (blank-line separated) of a benchmark file becomes one segment.
PARAGRAPH_RULE: dict[str, Any] = {"splitter": "fixed_separator", "separator": "\n\n", "max_tokens": 500}

#: Runs the real CLI in a child process, with the synthetic embedding model registered.
_CLI = "import zhiku.benchmarking; from zhiku.cli import main; main()"
#: Where the child finds this same zhiku, installed or not.
_PACKAGE_ROOT = str(Path(zhiku.__file__).resolve().parents[1])


@dataclass
class IngestThroughput:
    """What one ingest produced and how long each stage took, in seconds."""

    chunks: int
    documents: int
    seconds: dict[str, float]
    cpu_seconds: float

    @property
    def non_embedding_seconds(self) -> float:
        """Wall time less embedding: every stage but ``embed``, plus ``other``."""
        return self.seconds["total"] - self.seconds["embed"]

    def chunks_per_s(self) -> dict[str, float]:
        """Chunks per second of each stage, of the non-embedding work together, and overall.

        ``total_per_cpu_s`` divides by the CPU seconds the process used instead of wall time: it
        depends less than the others on other jobs competing for the cores.
        """
        rates = {stage: _rate(self.chunks, self.seconds[stage]) for stage in (*STAGES, "other")}
        rates["non_embedding"] = _rate(self.chunks, self.non_embedding_seconds)
        rates["total"] = _rate(self.chunks, self.seconds["total"])
        rates["total_per_cpu_s"] = _rate(self.chunks, self.cpu_seconds)
        return rates


@dataclass
class ChildIngest:
    """``zhiku ingest`` run as a child process: its peak resident memory, wall and CPU time."""

    peak_rss_mb: float
    seconds: float
    cpu_seconds: float
    segments: int


def measure_ingest(
    kb: KnowledgeBase, name: str, files: Sequence[Path], process_rule: dict[str, Any], embedding_model: str
) -> IngestThroughput:
    """Create dataset ``name``, ingest ``files`` in this process and time every stage."""
    dataset = kb.create_dataset(name, embedding_model=embedding_model, process_rule=process_rule)
    timings: dict[str, float] = {}
    started, cpu_started = time.perf_counter(), time.process_time()
    infos = dataset.add_files(files, timings=timings)
    total, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    failed = [info for info in infos if info.status != "completed"]
    if failed:
        raise ZhikuError(f"benchmark ingest failed for {failed[0].name}: {failed[0].error}")
    seconds = {stage: timings.get(stage, 0.0) for stage in STAGES}
    seconds["other"] = max(0.0, total - sum(seconds.values()))
    seconds["total"] = total
    return IngestThroughput(
        chunks=dataset.stats()["segments"], documents=len(infos), seconds=seconds, cpu_seconds=cpu
    )


def ingest_in_child(
    home: Path, source_dir: Path, dataset: str, log_file: Path, *, optimize: bool = True
) -> ChildIngest:
    """Run ``zhiku --home HOME ingest SOURCE_DIR --dataset DATASET`` and read its peak RSS;
    ``optimize=False`` adds ``--no-optimize`` (the caller builds the indexes).

    The dataset must exist (its process rule and embedding model decide how files are split and
    embedded). Peak RSS is the kernel's ``ru_maxrss`` of that one child (``wait4``). Raises
    ZhikuError with the end of the child's output when it fails.
    """
    command = [sys.executable, "-c", _CLI, "--home", str(home), "ingest", str(source_dir)]
    command += ["--dataset", dataset, *([] if optimize else ["--no-optimize"])]
    paths = [_PACKAGE_ROOT, *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    started = time.perf_counter()
    with log_file.open("wb") as log:
        child = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
        )
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    if child.returncode != 0:
        tail = log_file.read_text(encoding="utf-8", errors="replace")[-2000:]
        raise ZhikuError(f"zhiku ingest exited with {child.returncode}:\n{tail}")
    with KnowledgeBase.open(home) as kb:
        segments = kb.dataset(dataset).stats()["segments"]
    return ChildIngest(
        peak_rss_mb=maxrss_mb(usage.ru_maxrss),
        seconds=seconds,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        segments=segments,
    )


def maxrss_mb(maxrss: int) -> float:
    """``ru_maxrss`` is KiB on Linux and bytes on macOS."""
    return round(maxrss / (1024 * 1024) if sys.platform == "darwin" else maxrss / 1024, 1)


def _rate(count: int, seconds: float) -> float:
    return round(count / max(seconds, 1e-9), 1)
