"""The crash harness's writer processes: a server that forks one child per round, each child
running a plan of writes on a knowledge base and SIGKILLed at one chosen point.

``python -m tests.reliability.ingest_child FILE...`` loads once what every round would load again
(jieba's dictionary, tiktoken's ranks, the extractors' libraries: seconds per process), reading the
given sample files, and prints ``ready``. Then, for each plan file named on a line of stdin, it
forks a child and prints ``exit <code> <seconds>`` when the child has ended (code ``-9``: killed).

A plan holds ``home``, ``dataset``, ``steps`` (``delete``, ``replace``, ``add_files``), the write
batch sizes, ``result`` (where a surviving child writes how often each hook ran) and at most one
kill: ``kill = [hook, n]``, the child kills itself at the n-th call of that hook of the write path,
so every stage is hit deterministically; or ``delay``, the server kills the child that many
seconds after forking it (before reaping it, so the pid cannot belong to another process).
"""

from __future__ import annotations

import functools
import json
import os
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zhiku import KnowledgeBase
from zhiku.benchmarking import SyntheticEmbedding  # importing it registers the "synthetic" model
from zhiku.core.document_status import DocumentStatus
from zhiku.knowledge_base.indexing import ingestion, points
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex
from zhiku.knowledge_base.indexing.document_states import DocumentStates
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.text.keywords import idf
from zhiku.text.tokenizer import Tokenizer

#: Hook name → whether the process dies before the hooked call runs (else right after it).
#: "stage.*" fire after a document's status moved to that stage (committed); the others name
#: the object and method they wrap in the write path of ``DatasetIndex``.
HOOKS: dict[str, bool] = {
    "stage.parsing": False,
    "stage.cleaning": False,
    "stage.splitting": False,
    "stage.indexing": False,
    "embedding.embed_documents": False,  # vectors computed and cached, nothing upserted yet
    "vector.upsert": False,  # some points in the vector store only
    "fulltext.upsert": False,  # points in both stores, no rows yet
    "vector.flush": True,  # before the commit (new points not yet durable), or after one
    "keywords.add": False,  # inside the transaction, postings written, not committed
    "index.commit_version": False,  # a document's rows swapped, the transaction not committed
    "vector.delete": True,  # after the commit, before the stale points go
    "fulltext.delete": True,  # stale vectors gone, stale BM25 points still there
    "keywords.delete_segments": False,  # inside a transaction that replaces or deletes rows
    "vector.delete_document": True,  # the document's rows are gone, its points are not
    "fulltext.delete_document": True,  # its vectors are gone, its BM25 points are not
}

#: A child still running after this long is killed and reported as code ``timeout``.
CHILD_TIMEOUT = 90.0


class Killer:
    """Counts hook calls and kills this process at the ``n``-th call of ``hook``."""

    def __init__(self, kill: tuple[str, int] | None) -> None:
        self.kill = kill
        self.counts: Counter[str] = Counter()

    def hit(self, name: str) -> None:
        self.counts[name] += 1
        if self.kill is not None and self.kill == (name, self.counts[name]):
            os.kill(os.getpid(), signal.SIGKILL)

    def wrap(self, name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        before = HOOKS[name]

        @functools.wraps(function)
        def hooked(*args: Any, **kwargs: Any) -> Any:
            if before:
                self.hit(name)
            result = function(*args, **kwargs)
            if not before:
                self.hit(name)
            return result

        return hooked


def install(killer: Killer, index: DatasetIndex) -> None:
    """Wrap the write path of ``index`` and the stage changes of every dataset."""
    for owner_name, owner in (("vector", index.vector), ("fulltext", index.fulltext)):
        for method in ("upsert", "delete", "delete_document", "flush"):
            name = f"{owner_name}.{method}"
            if name in HOOKS:
                setattr(owner, method, killer.wrap(name, getattr(owner, method)))
    for method in ("add", "delete_segments"):
        setattr(index.keywords, method, killer.wrap(f"keywords.{method}", getattr(index.keywords, method)))
    # a parent-child dataset's postings are its children's: the same kill point
    index.child_keywords.add = killer.wrap("keywords.add", index.child_keywords.add)  # type: ignore[method-assign]
    index.embedding.embed_documents = killer.wrap(  # type: ignore[method-assign]
        "embedding.embed_documents", index.embedding.embed_documents
    )
    writes = index.document_writes
    writes.commit_version = killer.wrap("index.commit_version", writes.commit_version)  # type: ignore[method-assign]


def install_stages(killer: Killer, states: DocumentStates) -> None:
    """Count (and kill at) committed moves into the pipeline's stages."""
    move = states.move

    def staged(document_id: str, to: DocumentStatus, **options: Any) -> bool:
        moved = move(document_id, to, **options)
        if moved and f"stage.{to}" in HOOKS:
            killer.hit(f"stage.{to}")
        return moved

    states.move = staged  # type: ignore[method-assign]


def run(plan: dict[str, Any]) -> Counter[str]:
    """Carry out the plan's steps (in a forked child); the hook counts if nothing killed it."""
    ingestion.WRITE_BATCH_SEGMENTS = int(plan["write_batch_segments"])
    points._UPSERT_BATCH = int(plan["upsert_batch"])
    kill = plan.get("kill")
    killer = Killer((kill[0], int(kill[1])) if kill else None)
    # parsing in-process: the harness kills the write path, and a round parsing in a child of its
    # own would load the parsers again there instead of using those warm_up loaded
    with KnowledgeBase.open(plan["home"], embedding_model="synthetic", parse_in_child_process=False) as kb:
        dataset = kb.dataset(plan["dataset"])
        install(killer, kb.dataset_index(dataset.id))
        install_stages(killer, kb.states)
        for step in plan["steps"]:
            if step["op"] == "delete":
                dataset.delete_document(step["document_id"])
            elif step["op"] == "replace":
                dataset.replace_file(step["document_id"], Path(step["path"]))
            else:
                dataset.add_files([Path(path) for path in step["paths"]])
    return killer.counts


def warm_up(samples: list[Path]) -> None:
    """Load what every child would otherwise load again, before any thread or store exists."""
    pipeline = PipelineSpec().build()
    for sample in samples:
        pipeline.chunks(sample, sample.name)
    Tokenizer().tokenize("预热 warm up")
    idf("预热")
    SyntheticEmbedding().embed_query("预热 warm up")


def _child(plan: dict[str, Any]) -> None:
    code = 1
    try:
        Path(plan["result"]).write_text(json.dumps(run(plan)), encoding="utf-8")
        code = 0
    except BaseException:  # noqa: BLE001 - reported on stderr, the exit code tells the parent
        traceback.print_exc()
    finally:
        sys.stderr.flush()
        os._exit(code)


def _wait(pid: int, delay: float | None) -> str:
    """Reap the child, killing it after ``delay`` seconds (or the timeout); its exit code."""
    deadline = time.monotonic() + (CHILD_TIMEOUT if delay is None else min(delay, CHILD_TIMEOUT))
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return str(os.waitstatus_to_exitcode(status))
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            return str(os.waitstatus_to_exitcode(status)) if delay is not None else "timeout"
        time.sleep(0.005)


def main() -> None:
    warm_up([Path(arg) for arg in sys.argv[1:]])
    print("ready", flush=True)
    for line in sys.stdin:
        plan = json.loads(Path(line.strip()).read_text(encoding="utf-8"))
        started = time.monotonic()
        pid = os.fork()
        if pid == 0:
            _child(plan)
        code = _wait(pid, plan.get("delay"))
        print(f"exit {code} {time.monotonic() - started:.3f}", flush=True)


if __name__ == "__main__":
    main()
