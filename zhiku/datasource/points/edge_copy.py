"""An embedded shard's build copy: made beside the shard, built in a child process, and an
interrupted swap finished at the next open (see ``edge.py``'s docstring for why a build runs on a
copy, and ``edge_build`` for what the child does)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from zhiku.core.cancellation import checkpoint
from zhiku.core.errors import StoreError
from zhiku.core.payload_filter import METADATA_PREFIX
from zhiku.datasource.points import edge_build
from zhiku.datasource.points.collection import DOCUMENT_KEY, DocumentPayloads, VectorSpec
from zhiku.datasource.points.edge_build import SPLIT_SUFFIX, payloads_file
from zhiku.datasource.points.edge_config import build_full_scan, parts_after_build, parts_due, save_full_scan

#: Beside the shard directory: the copy being optimised, the original while the copy moves in,
#: the lock file of the process that has the shard open, and the payloads for the build.
BUILD, OLD, LOCK, PAYLOADS = ".build", ".old", ".lock", ".payloads.json"
#: The build process's default time limit: BUILD_SECONDS plus BUILD_SECONDS_PER_POINT per point,
#: about ten times what a build takes on one idle core (1,000,000 384-d points: ~1,300 s), so a
#: hung build is stopped (killed, the copy dropped, the open shard kept) without cutting a slow
#: one short.
BUILD_SECONDS = 600.0
BUILD_SECONDS_PER_POINT = 0.015
#: Seconds between two looks at whether a running build was cancelled (then it is killed).
_CANCEL_POLL_SECONDS = 0.25
#: What the build process runs: it imports qdrant-edge only, and loads the copy with its saved config.
BUILD_SCRIPT = str(Path(edge_build.__file__))


def sibling(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


@dataclass(frozen=True)
class BuildPlan:
    """What the build of a copy of a shard of ``spec`` does: the full-scan bound it saves into
    the copy's config, the parts it splits the points into (0: none; see ``edge_build``), and the
    seconds it may take."""

    spec: VectorSpec
    full_scan: int
    parts: int
    seconds: float


def plan_build(
    shard: Path,
    spec: VectorSpec,
    points: int,
    index_threshold_kb: int | None,
    search_threads: int,
    part_min_points: int,
    time_limit: float | None,
) -> BuildPlan:
    """The build of the shard at ``shard`` (``points`` of ``spec``): split if due (see
    ``edge_config``), and killed after ``time_limit`` seconds (None: :data:`BUILD_SECONDS` and
    :data:`BUILD_SECONDS_PER_POINT` a point)."""
    parts = parts_due(shard, points, search_threads, part_min_points)
    full_scan = build_full_scan(spec, index_threshold_kb, points, parts_after_build(shard, parts))
    seconds = BUILD_SECONDS + BUILD_SECONDS_PER_POINT * points if time_limit is None else time_limit
    return BuildPlan(spec, full_scan, parts, seconds)


def build_copy(shard: Path, payloads: DocumentPayloads | None, where: str, plan: BuildPlan) -> Path:
    """Copy ``shard`` beside it and build the copy's index in a child process as ``plan`` says,
    ``payloads`` written into it first (and the indexes of the metadata keys of no field
    dropped); the built copy's path. Whatever the build leaves but a built copy is removed."""
    build = sibling(shard, BUILD)
    remove_copy(build)
    written = sibling(shard, PAYLOADS)
    try:
        shutil.copytree(shard, build)
        save_full_scan(build, plan.spec, plan.full_scan)
        if payloads is not None:
            payloads_file(written, DOCUMENT_KEY, payloads.keys, payloads.updates(), METADATA_PREFIX)
        optimize_copy(build, written if payloads is not None else None, where, plan.seconds, plan.parts)
    except BaseException:
        remove_copy(build)
        raise
    finally:
        written.unlink(missing_ok=True)
        shutil.rmtree(sibling(build, SPLIT_SUFFIX), ignore_errors=True)
    return build


def remove_copy(build: Path) -> None:
    """Remove a build copy and the shard a split of it was writing."""
    shutil.rmtree(build, ignore_errors=True)
    shutil.rmtree(sibling(build, SPLIT_SUFFIX), ignore_errors=True)


def optimize_copy(path: Path, payloads: Path | None, where: str, timeout: float, parts: int = 0) -> None:
    """Optimise the shard copy at ``path`` in a child process (the build holds its GIL, not ours),
    killed after ``timeout`` seconds, when this thread's work is cancelled (a background optimize
    gives way to a delete or a stopping server: :func:`checkpoint`) or interrupted; the error
    says the previous index still serves and which setting gives the build longer."""
    written = [str(payloads)] if payloads is not None else []
    child = subprocess.Popen(
        [sys.executable, BUILD_SCRIPT, str(path), str(parts), *written],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                wait = max(0.0, min(_CANCEL_POLL_SECONDS, deadline - time.monotonic()))
                _, stderr = child.communicate(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"{where}: optimize stopped: its build process ran over {timeout:g} s and was "
                        "killed; searches go on with the previous index (setting index_build_time_limit)"
                    ) from None
                checkpoint()
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    if child.returncode != 0:
        tail = stderr.decode("utf-8", errors="replace")[-1000:]
        raise StoreError(f"{where}: optimize failed in its build process ({child.returncode}): {tail}")


def finish_swap(path: Path) -> None:
    """Complete a swap that stopped half-way: the original went to ``.old`` and the copy had not
    yet taken its place (restore the original), or had (drop the original); drop a stray copy."""
    old, build = sibling(path, OLD), sibling(path, BUILD)
    if old.exists() and not path.exists():
        os.replace(old, path)
    shutil.rmtree(old, ignore_errors=True)
    remove_copy(build)
