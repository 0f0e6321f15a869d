"""Threads ingesting, searching and editing one dataset at once, for a bounded number of operations.

Every operation is logged with the monotonic times it started and ended. Afterwards the database
must hold what the successful operations leave (no lost, duplicated or resurrected segment, no
two segments at one position, counts right), the stores must hold exactly the rows with their
flags, and every search must have returned only segments that were live at some moment of it:
never one whose segment or document was deleted, or that was disabled, before the search began.

``ZHIKU_CONCURRENCY_SEED`` changes the operations and their targets.
"""

from __future__ import annotations

import os
import random
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from tests.fixtures.make_files import make_csv, make_docx, make_pdf, make_text
from tests.reliability.consistency import assert_stores_match_rows
from zhiku import KnowledgeBase
from zhiku.core.errors import NotFound
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.indexing.segments import NewSegment, SegmentEditor
from zhiku.knowledge_base.runtime.jobs import DocumentIndexing

pytestmark = pytest.mark.reliability

SEED = int(os.environ.get("ZHIKU_CONCURRENCY_SEED", "11"))
INGESTERS, DOCUMENTS_PER_INGESTER = 3, 8
SEARCHERS, SEARCHES_PER_SEARCHER = 3, 40
EDITORS, EDITS_PER_EDITOR = 3, 30
JOIN_TIMEOUT = 300.0
PROCESS_RULE = {"max_tokens": 40, "chunk_overlap": 0}
#: Editing operations and how often each is drawn.
EDITS = {"add": 3, "update": 4, "toggle": 4, "delete_segment": 3, "delete_document": 1}
#: Edits other than deletions of documents go to the first documents this often.
HOT_DOCUMENTS, HOT_SHARE = 5, 0.7
METHODS = ("hybrid_search", "semantic_search", "full_text_search", "keyword_search")


def _text(marker: str, paragraphs: int) -> str:
    return "\n\n".join(
        f"Marker {marker} part {n}: 茶园在第{n}片山坡上种植乌龙茶，采摘后当天炒制。"
        f"Oolong from slope {n} is rolled and roasted on the day it is picked."
        for n in range(paragraphs)
    )


@dataclass
class Op:
    """A successful operation: ``value`` is the new content, the new flag or the added ids."""

    kind: str
    document_id: str
    segment_id: str | None
    started: float
    ended: float
    value: Any = None


@dataclass
class Search:
    started: float
    ended: float
    hits: list[tuple[str, str, str]]  # dataset, document, segment


@dataclass
class Log:
    """What the threads did, shared under a lock."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    ops: list[Op] = field(default_factory=list)
    searches: list[Search] = field(default_factory=list)
    #: documents editors may pick (indexed) → their segment count when indexed
    ready: dict[str, int] = field(default_factory=dict)
    markers: list[str] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    def add(self, op: Op) -> None:
        with self.lock:
            self.ops.append(op)

    def of(self, kind: str) -> list[Op]:
        return [op for op in self.ops if op.kind == kind]


def _thread(name: str, log: Log, work: Callable[[], None]) -> threading.Thread:
    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - reported by the test, with where it came from
            with log.lock:
                log.errors.append(f"{name}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")

    return threading.Thread(target=run, name=name, daemon=True)


# -- the workers ------------------------------------------------------------------------------------


def _ingester(ds: Dataset, log: Log, number: int, files: list[Path]) -> Callable[[], None]:
    def work() -> None:
        for n in range(DOCUMENTS_PER_INGESTER):
            marker = f"kiwi{number}x{n:02d}"
            started = time.monotonic()
            if n % 4 == 3:  # a real file of another format now and then
                info = ds.add_file(files[(number + n) % len(files)])
            else:
                info = ds.add_text(f"{marker}.md", f"# {marker}\n\n" + _text(marker, 2 + n % 3))
            assert info.status == "completed", (info.name, info.error)
            log.add(Op("ingest", info.id, None, started, time.monotonic(), info.segment_count))
            with log.lock:
                # a file ingested twice is skipped as a duplicate: the first count stands (edits
                # since then are in the log already)
                log.ready.setdefault(info.id, info.segment_count)
                log.markers.append(marker)

    return work


def _searcher(kb: KnowledgeBase, ds: Dataset, log: Log, rng: random.Random) -> Callable[[], None]:
    def work() -> None:
        for n in range(SEARCHES_PER_SEARCHER):
            with log.lock:
                marker = rng.choice(log.markers)
            query = f"Marker {marker}" if rng.random() < 0.7 else "乌龙茶 roasted"
            started = time.monotonic()
            if n % 4 == 3:  # the multi-path retrieval across both datasets
                hits = kb.retrieve(query, top_k=8).hits
            else:
                hits = ds.search_with(query, RetrievalConfig(search_method=rng.choice(METHODS), top_k=8))
            ended = time.monotonic()
            with log.lock:
                log.searches.append(
                    Search(started, ended, [(h.dataset_id, h.document_id, h.segment_id) for h in hits])
                )

    return work


def _editor(ds: Dataset, editor: SegmentEditor, log: Log, rng: random.Random) -> Callable[[], None]:
    kinds, weights = list(EDITS), list(EDITS.values())

    def edit(kind: str, document_id: str) -> Op | None:
        started = time.monotonic()
        if kind == "delete_document":
            ds.delete_document(document_id)
            return Op(kind, document_id, None, started, time.monotonic())
        if kind == "add":
            content = f"Added note {rng.getrandbits(40):x}: 新增的茶叶说明 oolong appendix."
            stored = editor.add(document_id, [NewSegment(content=content)])
            return Op(kind, document_id, None, started, time.monotonic(), [s.segment.id for s in stored])
        segments, _ = editor.page(document_id, offset=0, limit=1000)
        if not segments:
            return None
        target = rng.choice(segments).segment
        if kind == "update":
            content = f"Updated note {rng.getrandbits(40):x}: 改写后的茶园介绍 rewritten oolong text."
            editor.update(document_id, target.id, content=content)
            return Op(kind, document_id, target.id, started, time.monotonic(), content)
        if kind == "toggle":  # as the HTTP API does it, or through the dataset
            if rng.random() < 0.5:
                editor.update(document_id, target.id, enabled=not target.enabled)
            else:
                ds.set_segment_enabled(target.id, not target.enabled)
            return Op(kind, document_id, target.id, started, time.monotonic(), not target.enabled)
        editor.delete(document_id, target.id)
        return Op(kind, document_id, target.id, started, time.monotonic())

    def work() -> None:
        for _ in range(EDITS_PER_EDITOR):
            kind = rng.choices(kinds, weights)[0]
            with log.lock:  # mostly the first documents, so that edits meet on the same segments
                ready = list(log.ready)
            hot = kind != "delete_document" and rng.random() < HOT_SHARE
            document_id = rng.choice(ready[:HOT_DOCUMENTS] if hot else ready)
            try:
                op = edit(kind, document_id)
            except (NotFound, DocumentIndexing) as exc:  # raced with a deletion: refused, nothing done
                with log.lock:
                    log.refused[f"{kind}: {type(exc).__name__}"] += 1
                continue
            if op is not None:
                log.add(op)

    return work


# -- the checks ---------------------------------------------------------------------------------------


def _last_values(ops: list[Op]) -> set[Any]:
    """Values of the operations that may have been applied last: none began after they ended."""
    return {op.value for op in ops if not any(other.started > op.ended for other in ops)}


def _check_final_state(kb: KnowledgeBase, ds: Dataset, log: Log) -> None:
    rows = assert_stores_match_rows(kb, ds)
    by_id = {segment.id: segment for segment in rows}
    documents = {doc.id: doc for doc in ds.documents()}
    deleted_documents = {op.document_id for op in log.of("delete_document")}
    deleted_segments = {op.segment_id for op in log.of("delete_segment")}
    assert not deleted_documents & set(documents), "a deleted document is still listed"
    assert not {s.document_id for s in rows} & deleted_documents, "segments of a deleted document remain"
    assert not deleted_segments & set(by_id), "a deleted segment came back"

    positions = Counter((segment.document_id, segment.position) for segment in rows)
    assert max(positions.values()) == 1, f"two segments at one position: {positions.most_common(1)}"
    counts = Counter(segment.document_id for segment in rows)
    for document_id, indexed in log.ready.items():
        if document_id in deleted_documents:
            continue
        added = sum(len(op.value) for op in log.of("add") if op.document_id == document_id)
        removed = {op.segment_id for op in log.of("delete_segment") if op.document_id == document_id}
        expected = indexed + added - len(removed)
        doc = documents[document_id]
        assert doc.status == "completed", (doc.name, doc.status, doc.error)
        assert counts[document_id] == expected, f"{doc.name}: {counts[document_id]} rows, {expected} expected"
        assert doc.segment_count == expected, f"{doc.name}: count {doc.segment_count}, {expected} expected"

    for kind, attribute in (("update", "content"), ("toggle", "enabled")):
        ops_by_segment: dict[str, list[Op]] = {}
        for op in log.of(kind):
            ops_by_segment.setdefault(str(op.segment_id), []).append(op)
        for segment_id, ops in ops_by_segment.items():
            if segment_id in by_id:
                final = getattr(by_id[segment_id], attribute)
                assert final in _last_values(ops), f"segment {segment_id}: {attribute} {final!r} was lost"
    toggled = {op.segment_id for op in log.of("toggle")}
    assert all(s.enabled for s in rows if s.id not in toggled), "a segment nobody disabled is disabled"


def _stale_hits(ds: Dataset, log: Log) -> list[str]:
    """Hits of this dataset that were dead for the whole of their search."""
    gone_documents = [(op.document_id, op.ended) for op in log.of("delete_document")]
    gone_segments = [(op.segment_id, op.ended) for op in log.of("delete_segment")]
    toggles: dict[str, list[Op]] = {}
    for op in log.of("toggle"):
        toggles.setdefault(str(op.segment_id), []).append(op)
    stale = []
    for search in log.searches:
        for dataset_id, document_id, segment_id in search.hits:
            if dataset_id != ds.id:
                continue
            if any(d == document_id and ended < search.started for d, ended in gone_documents):
                stale.append(f"{segment_id}: its document was deleted before the search")
            if any(s == segment_id and ended < search.started for s, ended in gone_segments):
                stale.append(f"{segment_id}: deleted before the search")
            flips = toggles.get(segment_id, [])
            for off in (op for op in flips if not op.value and op.ended < search.started):
                if not any(on.value and on.started < search.ended and on.ended > off.started for on in flips):
                    stale.append(f"{segment_id}: disabled before the search")
    return stale


def _files(folder: Path) -> list[Path]:
    folder.mkdir()
    return [
        make_pdf(folder / "slopes.pdf", ["Marker pdfslope: 山坡上的乌龙茶园。", "Oolong terraces."]),
        make_docx(folder / "roast.docx", sections=[("Roasting", ["Marker docxroast: 乌龙茶的焙火工序。"])]),
        make_csv(folder / "prices.csv", [["tea", "price"], ["乌龙茶 Marker csvprice", "120"]]),
        make_text(folder / "page.html", "<html><body><p>Marker htmlpage: 乌龙茶 roasted.</p></body></html>"),
    ]


def test_ingest_search_and_edit_at_once_lose_and_serve_nothing_wrong(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic") as kb:
        ds = kb.create_dataset("busy", process_rule=PROCESS_RULE)
        quiet = kb.create_dataset("quiet", description="a second dataset for multi-path retrieval")
        quiet.add_text("quiet.md", "# 静\n\n乌龙茶 roasted in the quiet dataset.")
        log = Log()
        for n in range(HOT_DOCUMENTS):  # editors have documents from the start
            marker = f"seed{n}"
            info = ds.add_text(f"{marker}.md", _text(marker, 3))
            log.ready[info.id] = info.segment_count
            log.markers.append(marker)
        files = _files(tmp_path / "files")

        rng = random.Random(SEED)
        threads = (
            [_thread(f"ingest-{n}", log, _ingester(ds, log, n, files)) for n in range(INGESTERS)]
            + [
                _thread(f"search-{n}", log, _searcher(kb, ds, log, random.Random(rng.random())))
                for n in range(SEARCHERS)
            ]
            + [
                _thread(f"edit-{n}", log, _editor(ds, ds.segment_editor(), log, random.Random(rng.random())))
                for n in range(EDITORS)
            ]
        )
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=max(0.0, JOIN_TIMEOUT - (time.monotonic() - started)))
        assert not [t.name for t in threads if t.is_alive()], f"seed {SEED}: threads still running"

        summary = (
            f"seed {SEED}: {len(log.of('ingest'))} ingests, {len(log.searches)} searches "
            f"({sum(1 for s in log.searches if s.hits)} with hits), "
            f"{len(log.ops) - len(log.of('ingest'))} edits done {dict(Counter(op.kind for op in log.ops))}, "
            f"refused {dict(log.refused)}"
        )
        print(summary)
        assert not log.errors, f"{summary}\n" + "\n".join(log.errors)
        assert len(log.of("ingest")) == INGESTERS * DOCUMENTS_PER_INGESTER, summary
        assert len(log.searches) == SEARCHERS * SEARCHES_PER_SEARCHER, summary
        stale = _stale_hits(ds, log)
        assert not stale, f"{summary}\n" + "\n".join(stale[:20])
        _check_final_state(kb, ds, log)
        assert_stores_match_rows(kb, quiet)
