"""A knowledge base on PostgreSQL with pgvector: its stores are shared by every process (a
process without the data directory's owner lock — a second API process, a Celery worker — opens
them too), and a table made for another embedding size is a clear error."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tests.fixtures.pgvector import all_on_pgvector
from zhiku import KnowledgeBase
from zhiku.core.config import Settings
from zhiku.core.errors import StoreError
from zhiku.datasource.points.pgvector import store_url, table_prefix
from zhiku.datasource.vector.pgvector import PgVectorStore


def test_a_process_without_the_owner_lock_searches_and_writes_pgvector_stores(
    tmp_path: Path, pgvector_url: str
) -> None:
    stores = {**all_on_pgvector(pgvector_url), "embedding_model": "use"}
    home = tmp_path / "home"
    with KnowledgeBase.open(home, **stores) as owner:
        first = owner.create_dataset("d").add_text("leave.txt", "Employees get fifteen days of annual leave.")
        with KnowledgeBase.open(home, **stores) as second:
            assert second.owns_stores
            dataset = second.dataset("d")
            assert [hit.document_id for hit in dataset.search("annual leave")] == [first.id]
            added = dataset.add_text("travel.txt", "Book flights through the travel portal.")
        hits = owner.dataset("d").search("travel portal flights", search_method="full_text_search")
        assert hits[0].document_id == added.id


def test_a_table_of_another_dimension_is_a_clear_error_naming_both(tmp_path: Path, pgvector_url: str) -> None:
    """The dataset's table holds 384-d vectors (left by another installation on the same
    database), its model gives 512: opening its stores says so, and what to do."""
    with KnowledgeBase.open(tmp_path / "home", **all_on_pgvector(pgvector_url), embedding_model="use") as kb:
        dataset = kb.create_dataset("d")
        PgVectorStore(pgvector_url, f"{table_prefix(dataset.id)}_dense", 384).close()
        with pytest.raises(StoreError, match=r"holds vectors of 384 dimensions.*model gives 512.*re-index"):
            dataset.add_text("leave.txt", "Employees get fifteen days of annual leave.")
        with pytest.raises(StoreError, match="holds vectors of 384 dimensions"):
            dataset.search("annual leave")


def test_the_guide_postgresql_deployment_settings_keep_everything_in_the_database(
    tmp_path: Path, pgvector_url: str
) -> None:
    """The deployment guide's sample ``zhiku.toml`` (its database swapped for the test's): no
    embedded store, the stores in the metadata database, a knowledge base that ingests and searches."""
    guide = Path(__file__).parents[2] / "docs" / "how-to" / "postgresql.md"
    section = guide.read_text(encoding="utf-8")
    values = tomllib.loads(re.search(r"```toml\n(.*?)```", section, re.S).group(1))  # type: ignore[union-attr]
    assert Settings.model_validate({**values, "home": tmp_path}).embedded_stores is False
    values["database_url"] = pgvector_url
    with KnowledgeBase.open(tmp_path / "home", **values, embedding_model="use") as kb:
        assert store_url(kb.settings) == pgvector_url
        kb.settings.check_task_queue()
        dataset = kb.create_dataset("d")
        added = dataset.add_text("leave.txt", "Employees get fifteen days of annual leave.")
        assert [hit.document_id for hit in dataset.search("annual leave")] == [added.id]
        assert dataset.search("annual leave", search_method="full_text_search")
