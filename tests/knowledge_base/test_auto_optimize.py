"""The background optimize's parts: the change count every write keeps, the policy saying when a
dataset is due, one pass of the optimizer, and a background build giving way to a delete."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from zhiku import KnowledgeBase
from zhiku.core.cancellation import CancelToken, cancellable
from zhiku.core.config import Settings
from zhiku.core.db.models import DatasetChangesRow
from zhiku.core.document_status import DocumentStatus
from zhiku.core.errors import Cancelled
from zhiku.datasource.points import edge, edge_copy
from zhiku.knowledge_base.dataset_purge import mark_deleting
from zhiku.knowledge_base.runtime.auto_optimize import AutoOptimizer, OptimizePolicy

TEXTS = [f"第{i}段：明前龙井在清明前采摘，滋味鲜爽，产自杭州西湖第{i}号茶园。" for i in range(8)]
#: a build that never ends on its own
_SLEEPING_BUILD = "import time\ntime.sleep(600)\n"


def sleeping_build(tmp_path: Path) -> str:
    """A build script that never ends on its own, in place of the shard's."""
    script = tmp_path / "sleeping_build.py"
    script.write_text(_SLEEPING_BUILD, encoding="utf-8")
    return str(script)


def changes(kb: KnowledgeBase, dataset_id: str) -> DatasetChangesRow | None:
    with kb.sessions() as session:
        return session.get(DatasetChangesRow, dataset_id)


def open_kb(tmp_path: Path, **settings: object) -> KnowledgeBase:
    return KnowledgeBase.open(tmp_path / "home", embedding_model="synthetic", **settings)


def test_the_bound_is_a_thousand_points_or_a_tenth_of_the_dataset() -> None:
    policy = OptimizePolicy.from_settings(Settings())
    assert (policy.min_changes, policy.fraction) == (1000, 0.1)
    assert policy.bound(0) == policy.bound(10_000) == 1000
    assert policy.bound(100_000) == 10_000
    assert not OptimizePolicy(0, 0.1, 0.0).enabled


def test_writes_and_deletes_are_counted_and_an_optimize_counts_them_off(tmp_path: Path) -> None:
    with open_kb(tmp_path) as kb:
        ds = kb.create_dataset("tea")
        assert changes(kb, ds.id) is None  # nothing written yet
        first = ds.add_text("a.md", TEXTS[0])
        ds.add_text("b.md", TEXTS[1])
        written = changes(kb, ds.id)
        assert written is not None and written.points_changed == 2 and written.optimized_at is None
        ds.delete_document(first.id)
        after_delete = changes(kb, ds.id)
        assert after_delete is not None and after_delete.points_changed == 3  # a delete counts too
        ds.optimize()
        optimized = changes(kb, ds.id)
        assert optimized is not None and optimized.points_changed == 0 and optimized.optimized_at is not None


def test_one_pass_optimizes_a_settled_dataset_past_its_bound_and_only_it(tmp_path: Path) -> None:
    with open_kb(tmp_path, optimize_min_changes=3, optimize_quiet_seconds=0) as kb:
        big, small = kb.create_dataset("big"), kb.create_dataset("small")
        for number, text in enumerate(TEXTS[:4]):
            big.add_text(f"{number}.md", text)
        small.add_text("one.md", TEXTS[5])
        optimizer = AutoOptimizer(kb)
        assert optimizer.run_once() == [big.id]
        assert optimizer.run_once() == []  # nothing changed since
        left = changes(kb, small.id)
        assert left is not None and left.points_changed == 1  # below the bound: left alone
        # the BM25 records all carry the current average length now
        assert kb.dataset_index(big.id).fulltext.reweight(tolerance=0.0) == 0


def test_a_large_dataset_below_its_own_bound_is_not_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the smallest bound (3) but under its tenth (40 points: bound 4): no write lock
    taken, no stores opened, every poll."""
    with open_kb(
        tmp_path, optimize_min_changes=3, optimize_change_fraction=0.1, optimize_quiet_seconds=0
    ) as kb:
        ds = kb.create_dataset("big", process_rule={"max_tokens": 30, "chunk_overlap": 0})
        ds.add_text("all.md", "\n\n".join(TEXTS * 5))
        ds.optimize()
        points = len(ds.segments())
        assert points >= 40, points
        for number in range(3):
            ds.add_text(f"{number}.md", f"第{number}篇新加的茶园笔记：白毫银针。")
        opened: list[str] = []
        monkeypatch.setattr(kb, "dataset_index", lambda dataset_id: opened.append(dataset_id))
        assert AutoOptimizer(kb).run_once() == []
        assert opened == []


def test_a_dataset_is_due_only_once_settled(tmp_path: Path) -> None:
    with open_kb(tmp_path, optimize_min_changes=2, optimize_quiet_seconds=0) as kb:
        ds = kb.create_dataset("tea")
        documents = [ds.add_text(f"{number}.md", text) for number, text in enumerate(TEXTS[:3])]
        policy = OptimizePolicy.from_settings(kb.settings)
        with kb.sessions() as session:
            assert policy.candidates(session) == [ds.id] and policy.due(session, ds.id)
        quiet = OptimizePolicy(2, 0.1, 3600.0)  # written within the quiet period: not yet
        with kb.sessions() as session:
            assert quiet.candidates(session) == [] and not quiet.due(session, ds.id)
        # a document queued again (waiting for a worker): not before it is done
        assert kb.states.move(documents[0].id, DocumentStatus.WAITING, only_from={DocumentStatus.COMPLETED})
        with kb.sessions() as session:
            assert policy.candidates(session) == [] and not policy.due(session, ds.id)


def test_a_dataset_being_deleted_is_not_due(tmp_path: Path) -> None:
    with open_kb(tmp_path, optimize_min_changes=2, optimize_quiet_seconds=0) as kb:
        ds = kb.create_dataset("tea")
        for number, text in enumerate(TEXTS[:3]):
            ds.add_text(f"{number}.md", text)
        policy = OptimizePolicy.from_settings(kb.settings)
        assert mark_deleting(kb.sessions, ds.id)  # the first step of a deletion; its rows remain
        with kb.sessions() as session:
            assert policy.candidates(session) == [] and not policy.due(session, ds.id)


def test_a_delete_stops_a_background_build_which_counts_nothing_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edge, "CHILD_BUILD_MIN_POINTS", 0)  # build even a few points in a child
    monkeypatch.setattr(edge_copy, "BUILD_SCRIPT", sleeping_build(tmp_path))
    home = tmp_path / "home"
    with open_kb(tmp_path) as kb:
        ds = kb.create_dataset("tea")
        kept = ds.add_text("a.md", TEXTS[0])
        gone = ds.add_text("b.md", TEXTS[1])
        index = kb.dataset_index(ds.id)
        outcome: list[BaseException | None] = []

        def build() -> None:
            try:
                index.optimize(CancelToken())
                outcome.append(None)
            except BaseException as exc:  # noqa: BLE001 - handed to the test thread
                outcome.append(exc)

        builder = threading.Thread(target=build)
        builder.start()
        deadline = time.monotonic() + 60
        while not list(home.rglob("*.build")):  # the build process runs on its copy
            assert time.monotonic() < deadline and builder.is_alive(), outcome
            time.sleep(0.05)
        ds.delete_document(gone.id)  # does not wait for the (endless) build
        builder.join(60)
        assert not builder.is_alive()
        assert len(outcome) == 1 and isinstance(outcome[0], Cancelled), outcome
        left = changes(kb, ds.id)
        assert left is not None and left.points_changed == 3 and left.optimized_at is None
        hits = ds.search("明前龙井", search_method="full_text_search")
        assert [hit.document_id for hit in hits] == [kept.id]
    assert not list(home.rglob("*.build")), "the stopped build's copy was left behind"


def test_a_cancelled_build_process_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edge_copy, "BUILD_SCRIPT", sleeping_build(tmp_path))
    token = CancelToken()
    token.cancel("stopping")
    with cancellable(token), pytest.raises(Cancelled):
        edge_copy.optimize_copy(tmp_path, None, "test shard", timeout=600)
