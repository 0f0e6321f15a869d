"""Migrating a knowledge base to other stores: same rows, same search results, nothing re-embedded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from zhiku import KnowledgeBase
from zhiku.cli import main
from zhiku.core.db.models import DocumentRow, EmbeddingCacheRow
from zhiku.core.errors import AlreadyExists
from zhiku.knowledge_base.migrate import migrate

HANDBOOK = {
    "leave.txt": "Employees get fifteen days of annual leave. Unused leave carries over to March.",
    "travel.txt": "Book flights through the travel portal. Economy class for trips under six hours.",
    "security.txt": "Lock your laptop when you leave your desk. Report phishing emails to security.",
}
HIDDEN = "The secret parking garage code is 4711."
QUERIES = ("annual leave days", "flights travel portal", "phishing emails")
METHODS = ("semantic_search", "full_text_search", "keyword_search", "hybrid_search")


def _build(kb: KnowledgeBase) -> None:
    handbook = kb.create_dataset("handbook", description="Company handbook", keyword_count=5)
    for name, text in HANDBOOK.items():
        handbook.add_text(name, text)
    hidden = handbook.add_text("parking.txt", HIDDEN)
    handbook.set_segment_enabled(handbook.segments(hidden.id)[0].id, False)
    assert handbook.add_text("empty.txt", "   ").status == "error"
    faq = kb.create_dataset("faq", retrieval={"search_method": "full_text_search", "top_k": 3})
    faq.add_qa_pairs("faq.csv", [("How do I reset my password?", "Use the self-service portal.")])
    with kb.sessions.begin() as session:
        session.add(DocumentRow(dataset_id=faq.id, name="queued.txt", source="queued.txt", status="waiting"))


@pytest.fixture
def source(kb: KnowledgeBase) -> KnowledgeBase:
    _build(kb)
    return kb


@pytest.fixture
def target(tmp_path: Path) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase.open(
        tmp_path / "target", embedding_model="use", vector_backend="qdrant", fulltext_backend="qdrant"
    )
    yield knowledge_base
    knowledge_base.close()


def _cache_rows(kb: KnowledgeBase) -> int:
    with kb.sessions() as session:
        return int(session.scalar(select(func.count()).select_from(EmbeddingCacheRow)) or 0)


def _snapshot(kb: KnowledgeBase) -> dict[str, Any]:
    return {
        ds.name: (
            ds.id,
            ds.description,
            ds.retrieval,
            [(d.id, d.name, d.status, d.error, d.created_at, d.segment_count) for d in ds.documents()],
            [(s.id, s.content, s.answer, s.enabled, s.keywords) for s in ds.segments()],
        )
        for ds in kb.datasets()
    }


def test_migrate_copies_rows_and_serves_the_same_hits(
    source: KnowledgeBase, target: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedded: list[str] = []
    model = target.embedding("use", {}).model
    embed = model.embed_documents

    def counting(texts: list[str], **options: Any) -> Any:
        embedded.extend(texts)
        return embed(texts, **options)

    monkeypatch.setattr(model, "embed_documents", counting)

    report = migrate(source, target)

    assert (report.datasets, report.documents, report.segments) == (2, 6, 5)
    assert report.skipped == ["faq/queued.txt: waiting"]
    assert report.cache_rows == _cache_rows(source) == _cache_rows(target)
    assert embedded == []
    expected = _snapshot(source)
    expected["faq"][3].pop()  # the queued document is skipped
    assert _snapshot(target) == expected
    for method in METHODS:
        for query in QUERIES:
            before = source.dataset("handbook").search(query, search_method=method)
            after = target.dataset("handbook").search(query, search_method=method)
            assert [hit.segment_id for hit in after[:1]] == [hit.segment_id for hit in before[:1]]
        hidden = target.dataset("handbook").search(HIDDEN, search_method=method, top_k=10)
        assert all(hit.content != HIDDEN for hit in hidden)
    (answer,) = target.dataset("faq").search("reset password")
    assert answer.answer == "Use the self-service portal."


def test_migrate_refuses_a_target_with_the_same_names(source: KnowledgeBase, target: KnowledgeBase) -> None:
    target.create_dataset("faq")
    with pytest.raises(AlreadyExists, match="faq"):
        migrate(source, target)


@pytest.mark.skipif(
    bool(os.environ.get("ZHIKU_TEST_DATABASE_URL")),
    reason="moves to a SQLite file named on the command line; the PostgreSQL run gives every "
    "data directory its own schema instead, so the moved copy would not be found there",
)
def test_cli_migrate(tmp_path: Path) -> None:
    home, to_home = tmp_path / "home", tmp_path / "moved"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        _build(kb)
    database = f"sqlite:///{tmp_path / 'moved.db'}"
    result = CliRunner().invoke(
        main, ["--home", str(home), "migrate", "--to-database", database, "--to-home", str(to_home)]
    )
    assert result.exit_code == 0, result.output
    # reopening the source marks the queued document (no stored upload) ``error``: it is copied
    assert "migrated 2 datasets, 7 documents, 5 segments" in result.output
    assert (to_home / "zhiku.toml").read_text(encoding="utf-8") == f'database_url = "{database}"\n'
    with KnowledgeBase.open(to_home) as moved:
        assert [ds.name for ds in moved.datasets()] == ["handbook", "faq"]
        assert moved.dataset("handbook").search("annual leave days")[0].document_name == "leave.txt"
