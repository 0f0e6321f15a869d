"""An embedding model's ``api_key`` is stored sealed like a chat model's, and still reaches the
endpoint: as a string, as ``{"env": NAME}``, and when an older version stored it in plain text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fixtures.embedding_server import SlowEmbeddingServer
from zhiku import KnowledgeBase
from zhiku.core.db import DatasetRow

KEY = "sk-embedding-key"


def _stored(kb: KnowledgeBase, dataset_id: str) -> dict[str, object]:
    with kb.sessions() as session:
        return dict(session.get(DatasetRow, dataset_id).embedding_options)  # type: ignore[union-attr]


def test_the_key_is_stored_sealed_and_sent(tmp_path: Path) -> None:
    with SlowEmbeddingServer(delay_s=0.0, dim=32) as server:
        options = {"base_url": server.base_url, "model": "remote", "dim": 32, "api_key": KEY}
        with KnowledgeBase.open(tmp_path / "home") as kb:
            ds = kb.create_dataset("remote", embedding_model="openai", embedding_options=options)
            assert ds.add_text("tea.txt", "Green tea is brewed at eighty degrees.").status == "completed"
            stored = _stored(kb, ds.id)
            assert set(stored["api_key"]) == {"encrypted"}  # type: ignore[arg-type]
            assert KEY not in json.dumps(stored)
            # a row written before embedding keys were sealed holds the key in plain text ...
            with kb.sessions.begin() as session:
                session.get(DatasetRow, ds.id).embedding_options = options  # type: ignore[union-attr]
        with KnowledgeBase.open(tmp_path / "home") as kb:
            assert KEY not in json.dumps(_stored(kb, kb.dataset("remote").id))  # ... sealed at the next open
            assert kb.dataset("remote").search(
                "green tea", search_method="semantic_search", score_threshold=None
            )
        assert server.authorizations and set(server.authorizations) == {f"Bearer {KEY}"}


def test_a_key_named_by_an_environment_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMBEDDING_KEY_FOR_TEST", KEY)
    with SlowEmbeddingServer(delay_s=0.0, dim=32) as server:
        options = {
            "base_url": server.base_url,
            "model": "remote",
            "dim": 32,
            "api_key": {"env": "EMBEDDING_KEY_FOR_TEST"},
        }
        with KnowledgeBase.open(tmp_path / "home") as kb:
            ds = kb.create_dataset("remote", embedding_model="openai", embedding_options=options)
            assert ds.add_text("tea.txt", "Green tea is brewed at eighty degrees.").status == "completed"
            assert _stored(kb, ds.id)["api_key"] == {"env": "EMBEDDING_KEY_FOR_TEST"}
        assert set(server.authorizations) == {f"Bearer {KEY}"}
