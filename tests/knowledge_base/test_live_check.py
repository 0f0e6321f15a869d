"""The live check every search makes is answered from covering indexes, not the segments' rows."""

from __future__ import annotations

from sqlalchemy import text

from zhiku import KnowledgeBase
from zhiku.knowledge_base.dataset_index import _SERVED_IDS


def test_the_live_check_reads_only_the_served_indexes(kb: KnowledgeBase) -> None:
    ds = kb.create_dataset("live")
    ds.add_text("tea.txt", "Green tea is brewed at eighty degrees.\n\nBlack tea takes boiling water.")
    index = kb.dataset_index(ds.id)
    ids = [hit.segment_id for hit in ds.search("tea", search_method="full_text_search")]
    assert set(index.live_ids(ids)) == set(ids) and len(ids) >= 1
    engine = kb.sessions.kw["bind"]
    if engine.dialect.name != "sqlite":  # the plan below is SQLite's wording
        return
    bound = _SERVED_IDS.params(ids=ids)
    statement = bound.compile(engine, compile_kwargs={"literal_binds": True, "render_postcompile": True})
    with engine.connect() as connection:
        plan = " | ".join(row[-1] for row in connection.execute(text(f"EXPLAIN QUERY PLAN {statement}"), {}))
    assert "COVERING INDEX ix_segments_served" in plan, plan
    assert "COVERING INDEX ix_documents_served" in plan, plan
