"""Deleting a dataset: gone for every lookup at once, its rows removed in short transactions, and
a deletion a killed process left half done finished by the next open."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from sqlalchemy import func, select

from zhiku import KnowledgeBase
from zhiku.core.db import DatasetRow, DocumentRow
from zhiku.core.db.models import ChildChunkRow, KeywordPostingRow, SegmentRow
from zhiku.core.errors import NotFound
from zhiku.knowledge_base import dataset_purge

TEXT = "\n\n".join(f"第{i}段：明前龙井产于杭州西湖，{i}号茶园。" for i in range(7))


def _rows(kb: KnowledgeBase, dataset_id: str) -> dict[str, int]:
    """The dataset's rows per table (its own row included)."""
    tables = {"datasets": DatasetRow.id, "documents": DocumentRow.dataset_id}
    tables |= {"segments": SegmentRow.dataset_id, "postings": KeywordPostingRow.dataset_id}
    tables |= {"children": ChildChunkRow.dataset_id}
    with kb.sessions() as session:
        return {
            name: int(session.scalar(select(func.count()).where(column == dataset_id)) or 0)
            for name, column in tables.items()
        }


def _fill(kb: KnowledgeBase, name: str) -> str:
    ds = kb.create_dataset(name, process_rule={"max_tokens": 24, "chunk_overlap": 0})
    ds.add_text("a.md", TEXT)
    ds.add_text("b.md", TEXT.replace("龙井", "碧螺春"))
    ds.metadata.add_field("year", "number")
    ds.metadata.set_many({doc.id: {"year": 2024} for doc in ds.documents()})
    return ds.id


def test_a_deleted_dataset_goes_step_by_step_and_its_name_is_free(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dataset_purge, "SEGMENTS_PER_STEP", 3)
    monkeypatch.setattr(dataset_purge, "DOCUMENTS_PER_STEP", 1)
    steps: list[int] = []
    real_step = dataset_purge._delete_step

    def counted_step(sessions, table, dataset_id, limit):  # type: ignore[no-untyped-def]
        steps.append(limit)
        real_step(sessions, table, dataset_id, limit)

    monkeypatch.setattr(dataset_purge, "_delete_step", counted_step)
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        dataset_id = _fill(kb, "tea")
        kept = _fill(kb, "kept")
        before = _rows(kb, dataset_id)
        assert before["segments"] >= 7 and before["postings"] > before["segments"]
        store_dir = kb.settings.qdrant_path / dataset_id
        assert any(store_dir.rglob("*.json"))

        kb.delete_dataset("tea")

        assert _rows(kb, dataset_id) == dict.fromkeys(before, 0)
        assert not store_dir.exists()
        # segments three at a time, then the two documents one at a time
        assert steps == [3] * -(-before["segments"] // 3) + [1, 1]
        with pytest.raises(NotFound):
            kb.dataset("tea")
        assert kb.create_dataset("tea").id != dataset_id
        assert kb.dataset("kept").search("龙井", top_k=3)
        assert _rows(kb, kept)["segments"] == before["segments"]


def test_a_deletion_in_the_background_hides_the_dataset_at_once(tmp_path: Path) -> None:
    with KnowledgeBase.open(tmp_path / "home", embedding_model="use") as kb:
        dataset_id = _fill(kb, "tea")
        kb.delete_dataset("tea", wait=False)
        assert [ds.name for ds in kb.datasets()] == []
        with pytest.raises(NotFound):
            kb.dataset(dataset_id)
        assert kb.wait_for_deletions(timeout=60)
        assert _rows(kb, dataset_id)["datasets"] == 0


KILLED_MID_PURGE = """
import os, sys
from zhiku import KnowledgeBase
from zhiku.knowledge_base import dataset_purge

dataset_purge.SEGMENTS_PER_STEP = 2
real_step, done = dataset_purge._delete_step, []

def step_then_die(*args):
    real_step(*args)
    done.append(1)
    if len(done) == int(sys.argv[3]):
        os._exit(9)  # no cleanup of any kind, as a kill -9

dataset_purge._delete_step = step_then_die
with KnowledgeBase.open(sys.argv[1], embedding_model="use") as kb:
    if int(sys.argv[3]) <= 0:  # killed after the mark: before the stores' drop (0), or in it (-1)
        dataset_id = kb.dataset(sys.argv[2]).id
        dataset_purge.mark_deleting(kb.sessions, dataset_id)
        if sys.argv[3] == "-1":
            shards = sorted((kb.settings.qdrant_path / dataset_id).rglob("*.*"))
            for path in [path for path in shards if path.is_file()][: len(shards) // 2]:
                path.unlink()
        os._exit(9)
    kb.delete_dataset(sys.argv[2])
"""


@pytest.mark.parametrize(
    "steps_done", [0, -1, 1, 3], ids=["after-mark", "mid-drop", "one-step", "three-steps"]
)
def test_a_deletion_killed_midway_is_finished_by_the_next_open(tmp_path: Path, steps_done: int) -> None:
    home = tmp_path / "home"
    with KnowledgeBase.open(home, embedding_model="use") as kb:
        dataset_id = _fill(kb, "tea")
        segments = _rows(kb, dataset_id)["segments"]
        store_dir = kb.settings.qdrant_path / dataset_id
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent(KILLED_MID_PURGE))
    run = subprocess.run([sys.executable, str(script), str(home), "tea", str(steps_done)], timeout=300)
    assert run.returncode == 9

    with KnowledgeBase.open(home, embedding_model="use") as kb:
        # the dataset is gone for every lookup from the first step, and its name is free
        assert [ds.name for ds in kb.datasets()] == []
        assert kb.create_dataset("tea").id != dataset_id
        assert kb.wait_for_deletions(timeout=120)
        assert _rows(kb, dataset_id) == dict.fromkeys(_rows(kb, dataset_id), 0)
        assert not store_dir.exists()
    assert segments > 2 * steps_done  # the kill came with segments still left
