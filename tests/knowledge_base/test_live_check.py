"""The live check every search makes: answered from covering indexes, one index look-up per
candidate and document, never serving a disabled, failed or other dataset's segment."""

from __future__ import annotations

from sqlalchemy import update

from zhiku import KnowledgeBase
from zhiku.core.db import DocumentRow
from zhiku.knowledge_base.segment_catalog import SERVED_IDS

TEXT = "Green tea is brewed at eighty degrees.\n\nBlack tea takes boiling water."


def test_the_live_check_answers_only_served_segments_of_its_dataset(kb: KnowledgeBase) -> None:
    ds, other = kb.create_dataset("live"), kb.create_dataset("other")
    doc = ds.add_text("tea.txt", TEXT)
    hidden = ds.add_text("hidden.txt", "Oolong tea sits between green and black.")
    foreign = other.add_text("tea.txt", TEXT)
    catalog = kb.dataset_index(ds.id).catalog
    ours = [s.id for s in ds.segments(doc.id)]
    theirs = [s.id for s in other.segments(foreign.id)]
    disabled = [s.id for s in ds.segments(hidden.id)]
    ds.set_documents_enabled([hidden.id], False)
    unknown = "00000000-0000-0000-0000-000000000001"
    assert catalog.live_ids(ours + theirs + disabled + [unknown] + ours) == set(ours)
    assert catalog.live_ids([]) == set()
    with kb.sessions.begin() as session:  # a document in error is not served
        session.execute(update(DocumentRow).where(DocumentRow.id == doc.id).values(status="error"))
    assert catalog.live_ids(ours) == set()
    many = [f"00000000-0000-0000-0000-{i:012d}" for i in range(2000)]
    assert catalog.live_ids(many + ours) == set()


def test_the_live_check_reads_only_the_served_indexes(kb: KnowledgeBase) -> None:
    engine = kb.sessions.kw["bind"]
    if engine.dialect.name != "sqlite":  # the plan below is SQLite's wording
        return
    bound = SERVED_IDS.params(ids=["a", "b"])
    statement = bound.compile(engine, compile_kwargs={"literal_binds": True, "render_postcompile": True})
    with engine.connect() as connection:
        plan = " | ".join(row[-1] for row in connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}"))
    assert "COVERING INDEX ix_segments_served" in plan, plan
    assert "COVERING INDEX ix_documents_served" in plan, plan
    assert "status=?" not in plan, plan  # one look-up per document, not one per served status
