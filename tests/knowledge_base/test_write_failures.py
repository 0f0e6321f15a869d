"""A store that fails at any step of a write: the database and the three stores still agree on
one complete version of every document and segment, in the session and after a restart — for
paragraph datasets and for parent-child ones, whose child chunks are the stores' points."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from tests.fixtures.make_files import make_text
from tests.reliability.consistency import assert_stores_match_rows
from zhiku import KnowledgeBase
from zhiku.core.errors import StoreError
from zhiku.knowledge_base.dataset import Dataset
from zhiku.knowledge_base.indexing.dataset_index import DatasetIndex

V1 = "Alpha harvest notes: the spring longjing was picked at dawn.\n\nAlpha drying happens in woks."
V2 = "Omega harvest notes: the autumn tieguanyin was rolled twice.\n\nOmega roasting takes a day."
METHODS = ("semantic_search", "full_text_search", "keyword_search")
PARAGRAPH = {"max_tokens": 20, "chunk_overlap": 0}
PARENT_CHILD = {**PARAGRAPH, "doc_form": "hierarchical_model", "child_max_tokens": 16}
RULES = pytest.mark.parametrize("rule", [PARAGRAPH, PARENT_CHILD], ids=["paragraph", "parent_child"])


def _fail_at(index: DatasetIndex, step: str) -> Callable[[], None]:
    """Make ``step`` (``vector.upsert``, ``commit``, ...) raise once; returns the undo."""
    owner_name, method = step.split(".")
    owner: Any = {
        "vector": index.vector,
        "fulltext": index.fulltext,
        # the postings a parent-child dataset writes are its children's
        "keywords": index.child_keywords if index.has_children else index.keywords,
    }[owner_name]
    original = getattr(owner, method)

    def broken(*args: Any, **kwargs: Any) -> Any:
        setattr(owner, method, original)  # once
        raise StoreError(f"injected failure at {step}")

    setattr(owner, method, broken)
    return lambda: setattr(owner, method, original)


@contextmanager
def _failing(index: DatasetIndex, step: str) -> Iterator[None]:
    undo = _fail_at(index, step)
    try:
        yield
    finally:
        undo()


def _served(ds: Dataset, document_id: str) -> set[str]:
    """Contents of the document's segments any search method returns."""
    found = set()
    for method in METHODS:
        for query in ("Alpha harvest longjing", "Omega harvest tieguanyin"):
            found |= {
                h.content
                for h in ds.search(query, search_method=method, top_k=20)
                if h.document_id == document_id
            }
    return found


def _check(kb: KnowledgeBase, ds: Dataset, versions: dict[str, str | None]) -> None:
    """Each document serves exactly the segments of its expected version (None: nothing), and
    every served row has its points in both stores."""
    index = kb.dataset_index(ds.id)
    for document_id, text in versions.items():
        rows = {s.content for s in ds.segments(document_id)}
        if text is None:
            assert rows == set(), document_id
            continue
        # one complete version: its pieces in order make up that text, nothing of the other
        assert rows and all(content in text for content in rows), (document_id, rows)
        assert sum(len(content) for content in rows) >= len(text.replace("\n\n", "")), rows
        served = _served(ds, document_id)
        assert served and served <= rows, (document_id, served)
    point_ids = {p.id for s in ds.segments(with_children=True) for p in (s.children or [s])}
    assert point_ids <= index.vector.ids() and point_ids <= index.fulltext.ids()


BEFORE_COMMIT = ["vector.upsert", "fulltext.upsert", "vector.flush", "fulltext.flush", "keywords.add"]
AFTER_COMMIT = ["vector.delete", "fulltext.delete"]


@RULES
@pytest.mark.parametrize("step", BEFORE_COMMIT + AFTER_COMMIT)
def test_document_writes(tmp_path: Path, step: str, rule: dict[str, Any]) -> None:
    home = tmp_path / "home"
    v1, v2 = make_text(tmp_path / "v1.txt", V1), make_text(tmp_path / "v2.txt", V2)
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        ds = kb.create_dataset("d", process_rule=rule)
        first = ds.add_file(v1)
        index = kb.dataset_index(ds.id)
        with _failing(index, step):
            replaced = ds.replace_file(first.id, v2)
        if step in BEFORE_COMMIT:
            assert replaced.status == "completed" and "re-indexing failed" in (replaced.error or "")
            expected: dict[str, str | None] = {first.id: V1}
            with _failing(index, step):
                fresh = ds.add_text("fresh.txt", V2)
            assert fresh.status == "error" and "injected failure" in (fresh.error or "")
            expected[fresh.id] = None
        else:  # committed: the new version is served whole; leftovers are invisible
            assert replaced.status == "completed" and not replaced.error
            expected = {first.id: V2}
        _check(kb, ds, expected)
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:  # a restart
        ds = kb.dataset("d")
        _check(kb, ds, expected)
        assert_stores_match_rows(kb, ds)


@RULES
@pytest.mark.parametrize("step", BEFORE_COMMIT)
def test_segment_edits(tmp_path: Path, step: str, rule: dict[str, Any]) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        ds = kb.create_dataset("d", process_rule=rule)
        doc = ds.add_text("a.txt", V1)
        segment = ds.segments(doc.id)[0]
        editor = ds.segment_editor()
        with _failing(kb.dataset_index(ds.id), step), pytest.raises(StoreError):
            editor.update(doc.id, segment.id, content="Zeta kettles whistle loudly.", keywords=["zeta"])
        assert ds.segments(doc.id)[0].content == segment.content
        for method in ("full_text_search", "keyword_search"):  # the stores hold the old text
            hits = ds.search("Zeta kettles whistle", search_method=method, top_k=5)
            assert all(hit.segment_id != segment.id for hit in hits), (method, hits)
        assert (
            ds.search("Alpha harvest longjing", search_method="full_text_search")[0].segment_id == segment.id
        )
        assert_stores_match_rows(kb, ds)
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        assert_stores_match_rows(kb, kb.dataset("d"))


@RULES
@pytest.mark.parametrize("step", ["vector.set_enabled", "fulltext.set_enabled"])
@pytest.mark.parametrize("enabled", [False, True])
def test_enable_and_disable(tmp_path: Path, step: str, enabled: bool, rule: dict[str, Any]) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        ds = kb.create_dataset("d", process_rule=rule)
        doc = ds.add_text("a.txt", V1)
        segment = ds.segments(doc.id)[0]
        if enabled:
            ds.set_segment_enabled(segment.id, False)
        try:
            with _failing(kb.dataset_index(ds.id), step):
                ds.set_segment_enabled(segment.id, enabled)
        except StoreError:
            assert enabled  # enabling fails before the row changes; disabling has committed
        served = ds.segments(doc.id)[0].enabled
        assert served == (not enabled) if enabled else served is False
        assert_stores_match_rows(kb, ds)
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        assert_stores_match_rows(kb, kb.dataset("d"))


CHILD_EDITS = ["add", "update", "delete"]


@pytest.mark.parametrize("step", BEFORE_COMMIT)
@pytest.mark.parametrize("edit", CHILD_EDITS)
def test_child_chunk_edits(tmp_path: Path, step: str, edit: str) -> None:
    """A failed child chunk edit leaves the parent's previous children in the rows and stores."""
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        ds = kb.create_dataset("d", process_rule=PARENT_CHILD)
        doc = ds.add_text("a.txt", V1)
        parent = next(s for s in ds.segments(doc.id, with_children=True) if len(s.children) > 1)
        editor = ds.segment_editor()
        before = [(c.id, c.content) for c in parent.children]
        with _failing(kb.dataset_index(ds.id), step), pytest.raises(StoreError):
            if edit == "add":
                editor.add_child(doc.id, parent.id, "Zeta kettles whistle loudly.")
            elif edit == "update":
                editor.update_child(doc.id, parent.id, parent.children[0].id, "Zeta kettles whistle loudly.")
            else:
                editor.delete_child(doc.id, parent.id, parent.children[0].id)
        after = next(s for s in ds.segments(doc.id, with_children=True) if s.id == parent.id)
        assert [(c.id, c.content) for c in after.children] == before
        assert not ds.search("Zeta kettles whistle", search_method="keyword_search")
        assert_stores_match_rows(kb, ds)
    with KnowledgeBase.open(home, embedding_model="synthetic") as kb:
        assert_stores_match_rows(kb, kb.dataset("d"))
