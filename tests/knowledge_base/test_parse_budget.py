"""A document too costly to parse ends ``error`` within its budget and frees the worker: the next
document starts at once and is searchable."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

import zhiku.benchmarking  # noqa: F401 - registers the fast "synthetic" embedding model
from tests.fixtures.make_files import make_empty_paragraphs_docx, make_noise_docx, make_text
from zhiku import KnowledgeBase

pytestmark = pytest.mark.reliability


def test_docx_bombs_end_within_the_budget_and_the_next_document_starts_at_once(tmp_path: Path) -> None:
    ratio_bomb = make_empty_paragraphs_docx(tmp_path / "empty.docx", 400_000)  # 4 KB → 2.4 MB
    slow = make_noise_docx(tmp_path / "noise.docx", 200_000)  # ~15 s to parse whole
    good = make_text(tmp_path / "good.txt", "青山茶园的明前龙井在清明前采摘。")
    home = tmp_path / "home"
    # the noise is 600,000 elements: over the default element limit, raised to reach the time limit
    with KnowledgeBase.open(
        home, embedding_model="synthetic", parse_time_limit=1.0, parse_max_elements=10_000_000
    ) as kb:
        ds = kb.create_dataset("budget")
        started = time.monotonic()
        bomb, costly, fine = ds.add_files([ratio_bomb, slow, good])
        elapsed = time.monotonic() - started
        assert bomb.status == "error" and "zip bomb" in (bomb.error or ""), bomb.error
        assert costly.status == "error", costly.error
        assert "DOCX too costly to parse" in (costly.error or ""), costly.error
        assert fine.status == "completed", fine.error
        assert elapsed < 12, elapsed  # the budget plus building one lxml tree, not the whole parse
        ended = costly.stage_times["error"]
        next_started = fine.stage_times["parsing"]
        assert ended is not None and next_started is not None
        assert (next_started - ended).total_seconds() < 2
        assert ds.search("明前龙井", search_method="full_text_search")[0].document_id == fine.id


def test_the_element_and_cell_limits_are_settings(tmp_path: Path) -> None:
    page = make_text(tmp_path / "list.html", "<ul>" + "<li>茶</li>" * 200 + "</ul>")
    table = make_text(tmp_path / "table.csv", "\n".join(f"茶{n},{n}" for n in range(200)))
    home = tmp_path / "home"
    with KnowledgeBase.open(
        home, embedding_model="synthetic", parse_max_elements=100, parse_max_cells=100
    ) as kb:
        html, csv = kb.create_dataset("limits").add_files([page, table])
    assert html.status == "error" and "parse_max_elements" in (html.error or ""), html.error
    assert csv.status == "error" and "parse_max_cells" in (csv.error or ""), csv.error


def test_a_document_of_too_many_segments_is_refused_naming_the_setting(tmp_path: Path) -> None:
    """A 382 KB workbook of one-word rows was 60,000 segments, with no limit at all."""
    table = make_text(tmp_path / "words.csv", "word\n" + "\n".join(f"w{n}" for n in range(30)))
    fine = make_text(tmp_path / "fine.csv", "word\n" + "\n".join(f"w{n}" for n in range(10)))
    with KnowledgeBase.open(
        tmp_path / "home", embedding_model="synthetic", max_segments_per_document=10
    ) as kb:
        refused, kept = kb.create_dataset("segments").add_files([table, fine])
    assert refused.status == "error" and refused.segment_count == 0
    assert "30 segments" in (refused.error or "") and "max_segments_per_document" in (refused.error or "")
    assert kept.status == "completed" and kept.segment_count == 10, kept.error
