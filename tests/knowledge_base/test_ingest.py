"""Ingestion end to end: real files of several formats, statuses, bad input beside good input."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.make_files import make_docx, make_pdf, make_text
from zhiku import KnowledgeBase
from zhiku.core.errors import ConfigError

GOOD_PDF_PAGES = [
    "青山茶业的退货政策：未开封的茶叶在收货后十四天内可以退货。",
    "Returns: unopened tea can be returned within fourteen days of delivery.",
]


def _files(tmp: Path) -> dict[str, Path]:
    files = {
        "good.pdf": make_pdf(tmp / "good.pdf", GOOD_PDF_PAGES),
        "good.docx": make_docx(
            tmp / "good.docx",
            sections=[
                ("History", ["The company was founded in 1987 in Hangzhou by a family of tea farmers."])
            ],
        ),
        "good.md": make_text(tmp / "good.md", "# 冲泡\n\n绿茶用八十度的水冲泡两分钟。\n"),
        "empty.txt": make_text(tmp / "empty.txt", ""),
        "garbage.txt": tmp / "garbage.txt",
        "corrupt.pdf": tmp / "corrupt.pdf",
        "locked.pdf": make_pdf(tmp / "locked.pdf", ["secret"], password="pw"),
        "weird.xyz": tmp / "weird.xyz",
        "gbk.txt": make_text(
            tmp / "gbk.txt", "这是用GBK编码保存的说明：仓库位于杭州西湖区。", encoding="gbk"
        ),
    }
    files["garbage.txt"].write_bytes(bytes(range(256)) * 20)
    files["corrupt.pdf"].write_bytes(b"%PDF-1.7\n" + b"\x00\x13garbage" * 50)
    files["weird.xyz"].write_bytes(b"\x89\x01\x02\x03 not a known format \xff\xfe" * 10)
    return files


def test_bad_files_are_marked_error_and_good_ones_stay_searchable(kb: KnowledgeBase, tmp_path: Path) -> None:
    files = _files(tmp_path)
    ds = kb.create_dataset("mixed")
    infos = {info.name: info for info in ds.add_files(list(files.values()))}

    for name in ("good.pdf", "good.docx", "good.md", "gbk.txt"):
        assert infos[name].status == "completed", (name, infos[name].error)
        assert infos[name].segment_count >= 1
        assert infos[name].stage_times["parsing"] is not None
        assert infos[name].stage_times["completed"] is not None
    for name in ("empty.txt", "garbage.txt", "corrupt.pdf", "locked.pdf", "weird.xyz"):
        assert infos[name].status == "error", name
        assert infos[name].error and name in infos[name].error, infos[name].error
        assert infos[name].segment_count == 0
    assert "encrypt" in infos["locked.pdf"].error.lower()

    hits = ds.search("退货期限是多少天？", top_k=3)
    assert hits and hits[0].document_name == "good.pdf"
    assert hits[0].metadata.get("page") == 1
    assert ds.search("仓库在哪里", search_method="keyword_search")[0].document_name == "gbk.txt"
    assert ds.search("founded 1987", search_method="full_text_search")[0].document_name == "good.docx"


def test_hits_carry_per_method_scores_and_ranks(kb: KnowledgeBase, tmp_path: Path) -> None:
    ds = kb.create_dataset("scores")
    ds.add_file(
        make_text(
            tmp_path / "a.md", "# 退货\n\n未开封的茶叶在十四天内可以退货。\n\n# 发货\n\n订单在两天内发货。\n"
        )
    )
    hit = ds.search("茶叶退货", top_k=1, hybrid_methods=["semantic", "full_text", "keyword"])[0]
    assert set(hit.scores) == {"semantic", "full_text", "keyword"}
    assert all(rank >= 1 for rank in hit.ranks.values())
    assert 0.0 < hit.score <= 1.0


def test_replace_file_swaps_segments_in_every_store(kb: KnowledgeBase, tmp_path: Path) -> None:
    ds = kb.create_dataset("replace")
    first = ds.add_file(make_text(tmp_path / "v1.txt", "Version one talks about oolong tea from Fujian."))
    ds.replace_file(
        first.id, make_text(tmp_path / "v2.txt", "Version two talks about pu-erh tea from Yunnan.")
    )
    assert [s.content for s in ds.segments(first.id)] == ["Version two talks about pu-erh tea from Yunnan."]
    for method in ("semantic_search", "full_text_search", "keyword_search"):
        hits = ds.search("oolong Fujian", search_method=method, top_k=5)
        assert all("oolong" not in hit.content for hit in hits), method
    index = kb.dataset_index(ds.id)
    assert index.vector.count() == 1 and index.fulltext.count() == 1


def test_failed_replacement_keeps_previous_version_served(kb: KnowledgeBase, tmp_path: Path) -> None:
    ds = kb.create_dataset("keep")
    doc = ds.add_file(make_text(tmp_path / "v1.txt", "Jasmine tea is scented with jasmine blossoms."))
    broken = tmp_path / "v2.pdf"
    broken.write_bytes(b"%PDF-1.4 truncated")
    info = ds.replace_file(doc.id, broken)
    assert info.status == "completed" and "re-indexing failed" in (info.error or "")
    assert ds.search("jasmine blossoms", search_method="full_text_search")[0].document_id == doc.id


def test_disabled_segment_is_not_returned(kb: KnowledgeBase, tmp_path: Path) -> None:
    ds = kb.create_dataset("toggle")
    doc = ds.add_file(make_text(tmp_path / "t.txt", "White tea is the least processed tea."))
    segment = ds.segments(doc.id)[0]
    ds.set_segment_enabled(segment.id, False)
    for method in ("semantic_search", "full_text_search", "keyword_search", "hybrid_search"):
        assert ds.search("white tea processed", search_method=method) == [], method
    ds.set_segment_enabled(segment.id, True)
    assert ds.search("white tea processed", search_method="full_text_search")[0].segment_id == segment.id


def test_delete_document_and_dataset_remove_store_data(kb: KnowledgeBase, tmp_path: Path) -> None:
    ds = kb.create_dataset("gone")
    keep = ds.add_file(
        make_text(tmp_path / "keep.txt", "Green tea keeps its colour because it is not oxidised.")
    )
    drop = ds.add_file(make_text(tmp_path / "drop.txt", "Black tea is fully oxidised before drying."))
    ds.delete_document(drop.id)
    index = kb.dataset_index(ds.id)
    assert index.vector.ids() == index.fulltext.ids() == {s.id for s in ds.segments(keep.id)}
    assert [d.id for d in ds.documents()] == [keep.id]
    store_dir = kb.settings.qdrant_path / ds.id
    kb.delete_dataset("gone")
    assert not store_dir.exists() or not any(store_dir.rglob("*.*"))
    assert [d.name for d in kb.datasets()] == []


def test_a_process_rule_asking_an_overlap_of_a_whole_chunk_is_refused(kb: KnowledgeBase) -> None:
    with pytest.raises(ConfigError, match=r"process_rule\.chunk_overlap: 120 must be smaller than max_"):
        kb.create_dataset("overlap", process_rule={"max_tokens": 100, "chunk_overlap": 120})
    with pytest.raises(ConfigError, match=r"process_rule\.child_chunk_overlap"):
        kb.create_dataset(
            "children",
            process_rule={
                "doc_form": "hierarchical_model",
                "child_max_tokens": 32,
                "child_chunk_overlap": 32,
            },
        )
    assert kb.create_dataset("inherited", process_rule={"max_tokens": 40}).process_rule.chunk_overlap == 50
