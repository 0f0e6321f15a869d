"""SIGKILL during ingestion, re-ingestion and deletion, at seeded points of every write stage.

A base knowledge base (four documents) is copied for every round; a child process
(``ingest_child``) then deletes one document, replaces another, ingests 30 files of seven formats,
replaces and deletes two more, and is killed at one point: at the n-th call of a hook in the write
path (n drawn from the calls a complete control run made), or after a random delay. The test
process then opens the copy, as a restart would, and checks that every document is served in
exactly one complete version (old or new) in all three stores, or not at all (a failed re-ingest
keeps the old one); that no store holds a point without a row; and that the dataset answers
searches and takes new documents.

``ZHIKU_CRASH_SEED`` replays a failure (the failure message names the seed and the kill point).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from tests.fixtures.make_files import make_csv, make_docx, make_pdf, make_text, make_xlsx
from tests.reliability.consistency import assert_stores_match_rows
from tests.reliability.ingest_child import HOOKS
from zhiku import KnowledgeBase
from zhiku.core.document_status import IN_PROGRESS
from zhiku.knowledge_base.dataset import Dataset

pytestmark = pytest.mark.reliability

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("ZHIKU_CRASH_SEED", "20250605"))
DATASET = "crash"
NEW_FILES = 30
#: Kill points drawn per hook (fewer when the control run called it fewer times).
POINTS_PER_HOOK = 2
TIMED_KILLS = 5
#: Small write batches, so that a run makes several commits (each flushes both stores: fsyncs).
WRITE_BATCH_SEGMENTS = 25
#: Paragraph, and parent-child (whose child chunks are the stores' points, the parents the rows searched).
PROCESS_RULES = {
    "paragraph": {"max_tokens": 40, "chunk_overlap": 0},
    "parent_child": {
        "max_tokens": 40,
        "chunk_overlap": 0,
        "doc_form": "hierarchical_model",
        "child_max_tokens": 16,
        "child_chunk_overlap": 0,
    },
}

Version = tuple[tuple[int, str], ...]


# -- the corpus ----------------------------------------------------------------------------------


def _paragraphs(tag: str, count: int, *, variant: str = "") -> list[str]:
    """Paragraphs of ~40 tokens carrying ``tag`` as a searchable marker word; ``variant`` changes
    the second paragraph only."""
    teas = ["龙井", "碧螺春", "铁观音", "大红袍", "普洱", "白毫银针", "祁门红茶"]
    out = []
    for n in range(count):
        tea = teas[(len(tag) + n) % len(teas)]
        changed = variant if n == 1 else ""
        out.append(
            f"Marker {tag} section {n}{changed}: {tea}的采摘在清明前后进行，茶农每天清晨上山。"
            f"Notes on {tea} brewing, water at {80 + n} degrees, steeped for {n + 2} minutes."
        )
    return out


def _write(path: Path, tag: str, count: int, *, variant: str = "") -> Path:
    paragraphs = _paragraphs(tag, count, variant=variant)
    kind = path.suffix
    if kind == ".md":
        return make_text(path, f"# {tag}\n\n" + "\n\n".join(paragraphs))
    if kind == ".txt":
        return make_text(path, "\n\n".join(paragraphs))
    if kind == ".html":
        body = "".join(f"<p>{p}</p>" for p in paragraphs)
        return make_text(path, f"<html><head><script>var x = 1;</script></head><body>{body}</body></html>")
    if kind == ".pdf":
        return make_pdf(path, paragraphs)
    if kind == ".docx":
        return make_docx(path, sections=[(tag, paragraphs)])
    if kind == ".csv":
        return make_csv(path, [["topic", "note"], *[[tag, p] for p in paragraphs]])
    return make_xlsx(path, {"notes": [["topic", "note"], *[[tag, p] for p in paragraphs]]})


SUFFIXES = (".md", ".txt", ".html", ".pdf", ".docx", ".csv", ".xlsx")


@dataclass
class Corpus:
    base: list[Path]
    replacements: dict[int, Path]  # base index → its new version
    new: list[Path]


def _corpus(folder: Path) -> Corpus:
    folder.mkdir()
    base = [_write(folder / f"base{i}{SUFFIXES[i]}", f"basedoc{i}", 4) for i in range(4)]
    # a new version keeps the first paragraphs (their segment ids are reused), changes one, drops one
    replacements = {
        i: _write(folder / f"base{i}-v2{SUFFIXES[i]}", f"basedoc{i}", 3, variant="v2") for i in (1, 2)
    }
    new = [
        _write(folder / f"doc{i:02d}{SUFFIXES[i % len(SUFFIXES)]}", f"quokka{i:02d}", 2 + i % 3)
        for i in range(NEW_FILES)
    ]
    return Corpus(base, replacements, new)


def _copy_sparse(source: str, target: str) -> None:
    """Copy a file without filling its holes: each store's write-ahead log is two 32 MB files,
    nearly all hole, and writing them out would make every round's copy take seconds."""
    with open(source, "rb") as reader, open(target, "wb") as writer:
        size = os.fstat(reader.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(reader.fileno(), offset, os.SEEK_DATA)
            except OSError:  # only a hole is left
                break
            offset = os.lseek(reader.fileno(), start, os.SEEK_HOLE)
            reader.seek(start)
            writer.seek(start)
            writer.write(reader.read(offset - start))
        writer.truncate(size)


def _copy_home(source: Path, target: Path) -> None:
    shutil.copytree(source, target, copy_function=_copy_sparse)


# -- rounds ---------------------------------------------------------------------------------------


@dataclass
class Round:
    kill: tuple[str, int] | None = None
    delay: float | None = None

    def describe(self) -> str:
        if self.kill:
            return f"kill at call {self.kill[1]} of {self.kill[0]}"
        return f"kill after {self.delay:.3f} s" if self.delay is not None else "no kill"


@dataclass
class Outcome:
    killed: bool
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


class Writer:
    """The ``ingest_child`` server: forks one writer per round, reports how each ended."""

    def __init__(self, folder: Path, samples: list[Path]) -> None:
        self._log = (folder / "writer-stderr.log").open("wb")
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.ingest_child", *map(str, samples)],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
        )
        self._expect("ready")

    def _expect(self, prefix: str) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        assert line.startswith(prefix), f"writer said {line!r}; see {self._log.name}"
        return line

    def run(self, home: Path, steps: list[dict[str, Any]], plan: Round) -> Outcome:
        result = home.parent / f"{home.name}-counts.json"
        plan_file = home.parent / f"{home.name}-plan.json"
        plan_file.write_text(
            json.dumps(
                {
                    "home": str(home),
                    "dataset": DATASET,
                    "steps": steps,
                    "kill": list(plan.kill) if plan.kill else None,
                    "delay": plan.delay,
                    "write_batch_segments": WRITE_BATCH_SEGMENTS,
                    "upsert_batch": 4,
                    "result": str(result),
                }
            ),
            encoding="utf-8",
        )
        assert self._process.stdin is not None
        self._process.stdin.write(f"{plan_file}\n")
        self._process.stdin.flush()
        _, code, seconds = self._expect("exit ").split()
        if code == str(-signal.SIGKILL):
            return Outcome(killed=True, seconds=float(seconds))
        assert code == "0", f"writer child ended with {code} ({plan.describe()}); see {self._log.name}"
        counts = json.loads(result.read_text(encoding="utf-8"))
        return Outcome(killed=False, counts=counts, seconds=float(seconds))

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._log.close()


def _steps(corpus: Corpus, base_ids: list[str]) -> list[dict[str, Any]]:
    return [
        {"op": "delete", "document_id": base_ids[0]},
        {"op": "replace", "document_id": base_ids[1], "path": str(corpus.replacements[1])},
        {"op": "add_files", "paths": [str(path) for path in corpus.new]},
        {"op": "replace", "document_id": base_ids[2], "path": str(corpus.replacements[2])},
        {"op": "delete", "document_id": base_ids[3]},
    ]


def _versions(dataset: Dataset) -> dict[str, Version]:
    """Each document's served version: its rows' (position, content hash), by document id."""
    versions: dict[str, list[tuple[int, str]]] = {}
    for segment in dataset.segments():
        versions.setdefault(segment.document_id, []).append((segment.position, segment.hash))
    return {document_id: tuple(sorted(rows)) for document_id, rows in versions.items()}


# -- the world every round starts from ---------------------------------------------------------------


@dataclass
class World:
    writer: Writer
    base_home: Path
    control_home: Path
    steps: list[dict[str, Any]]
    base_ids: list[str]
    #: document key (base document id, or a new file's name) → versions it may serve once completed
    complete: dict[str, set[Version]]
    #: the version a document still serves when its re-ingest failed (the replaced ones: the old)
    failed: dict[str, Version]
    #: document key → the word only its text holds
    markers: dict[str, str]
    counts: dict[str, int]
    work_seconds: float


def _key(base_ids: list[str], document_id: str, name: str) -> str:
    return document_id if document_id in base_ids else name


@pytest.fixture(scope="module", params=sorted(PROCESS_RULES))
def world(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[World]:
    root = tmp_path_factory.mktemp(f"crash-{request.param}")
    corpus = _corpus(root / "files")
    writer = Writer(root, corpus.new[: len(SUFFIXES)])
    try:
        yield _world(root, corpus, writer, PROCESS_RULES[request.param])
    finally:
        writer.close()


def _world(root: Path, corpus: Corpus, writer: Writer, process_rule: dict[str, Any]) -> World:
    """The base copy, and what a complete run (the control) makes of it."""
    base_home = root / "base"
    with KnowledgeBase.open(base_home, embedding_model="synthetic") as kb:
        dataset = kb.create_dataset(DATASET, process_rule=process_rule)
        infos = dataset.add_files(corpus.base)
        assert [info.status for info in infos] == ["completed"] * 4, [info.error for info in infos]
        base_ids = [info.id for info in infos]
        old = _versions(dataset)
    steps = _steps(corpus, base_ids)

    control = root / "control"
    _copy_home(base_home, control)
    outcome = writer.run(control, steps, Round())
    with KnowledgeBase.open(control, embedding_model="synthetic") as kb:
        dataset = kb.dataset(DATASET)
        new = _versions(dataset)
        documents = dataset.documents()
        assert all(doc.status == "completed" for doc in documents), [(d.name, d.error) for d in documents]
        assert {doc.id for doc in documents} >= {base_ids[1], base_ids[2]}
        assert len(documents) == 2 + NEW_FILES
        complete = {_key(base_ids, doc.id, doc.name): {new[doc.id]} for doc in documents}
    for document_id in base_ids:
        complete.setdefault(document_id, set()).add(old[document_id])
    assert all(len(complete[base_ids[i]]) == 2 for i in (1, 2)), "a new version must differ from the old"
    failed = {base_ids[i]: old[base_ids[i]] for i in (1, 2)}
    markers = {document_id: f"basedoc{i}" for i, document_id in enumerate(base_ids)}
    markers.update({path.name: f"quokka{i:02d}" for i, path in enumerate(corpus.new)})
    return World(
        writer=writer,
        base_home=base_home,
        control_home=control,
        steps=steps,
        base_ids=base_ids,
        complete=complete,
        failed=failed,
        markers=markers,
        counts=outcome.counts,
        work_seconds=outcome.seconds,
    )


# -- the checks ---------------------------------------------------------------------------------------


def _check_restart(home: Path, world: World, rng: random.Random) -> None:
    """Open as a restart would, then check every document, the stores, search and a new write."""
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        dataset = kb.dataset(DATASET)
        rows = assert_stores_match_rows(kb, dataset)
        served = _versions(dataset)
        completed = []
        for doc in dataset.documents():
            key = _key(world.base_ids, doc.id, doc.name)
            assert key in world.complete, f"unexpected document {doc.name!r}"
            version = served.get(doc.id, ())
            assert doc.status not in IN_PROGRESS, f"{doc.name}: still {doc.status} after the restart"
            if doc.status == "completed":
                assert version in world.complete[key], f"{doc.name}: completed but serves a mix of versions"
                assert doc.segment_count == len(version), f"{doc.name}: segment_count {doc.segment_count}"
                completed.append(doc)
            else:
                assert doc.status == "error", f"{doc.name}: status {doc.status} after the restart"
                assert "interrupted" in (doc.error or ""), f"{doc.name}: error {doc.error!r}"
                assert version == world.failed.get(key, ()), f"{doc.name}: failed, serves {len(version)}"
        assert {segment.document_id for segment in rows} <= {doc.id for doc in dataset.documents()}

        assert completed, "no document completed"
        target = rng.choice(completed)
        marker = world.markers[_key(world.base_ids, target.id, target.name)]
        for method in ("full_text_search", "hybrid_search"):
            # what is served, not how relevant a made-up marker word looks: no threshold
            hits = dataset.search(f"Marker {marker}", search_method=method, top_k=3, score_threshold=None)
            assert hits and hits[0].document_id == target.id, f"{method} for {marker} found {hits[:1]}"

        after = dataset.add_text("after-restart.md", "# 重启之后\n\nMarker wombat: 重启之后仍能写入。")
        assert after.status == "completed", after.error
        hits = dataset.search("wombat", search_method="full_text_search", top_k=1, score_threshold=None)
        assert hits and hits[0].document_id == after.id


def _plan(world: World, rng: random.Random) -> list[Round]:
    rounds = []
    for hook in HOOKS:
        calls = world.counts.get(hook, 0)
        assert calls, f"the control run never called {hook}"
        for n in sorted(rng.sample(range(1, calls + 1), min(POINTS_PER_HOOK, calls))):
            rounds.append(Round(kill=(hook, n)))
    rounds += [Round(delay=rng.uniform(0.0, world.work_seconds)) for _ in range(TIMED_KILLS)]
    return rounds


def test_control_run_serves_every_document_in_every_store(world: World) -> None:
    _check_restart(world.control_home, world, random.Random(SEED))


def test_sigkill_at_seeded_points_leaves_one_version_per_document(world: World, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    rounds = _plan(world, rng)
    failures: list[str] = []
    killed: dict[str, int] = {}
    for number, plan in enumerate(rounds):
        home = tmp_path / f"round{number:02d}"
        _copy_home(world.base_home, home)
        outcome = world.writer.run(home, world.steps, plan)
        if plan.kill is not None:
            assert outcome.killed, f"seed {SEED}: the child was not killed ({plan.describe()})"
        if outcome.killed:
            stage = plan.kill[0] if plan.kill else "timed"
            killed[stage] = killed.get(stage, 0) + 1
        try:
            _check_restart(home, world, random.Random(f"{SEED}-{number}"))
        except AssertionError as exc:
            failures.append(f"round {number} ({plan.describe()}): {exc}")
            continue
        shutil.rmtree(home)
    summary = f"seed {SEED}: {sum(killed.values())} kills survived of {len(rounds)} rounds, by hook {killed}"
    print(summary)
    assert not failures, summary + "\n" + "\n".join(failures)
    assert sum(killed.values()) >= 20, summary
