"""``zhiku dataset sections`` and ``zhiku search --section``."""

from __future__ import annotations

from pathlib import Path

GUIDE = (
    "# Guide\n\nGreen tea guide.\n\n## Brewing\n\nBrew green tea cool.\n\n"
    "## Storage\n\nStore green tea sealed.\n"
)


def test_sections_are_listed_described_and_searched(run, run_json, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    run("ingest", str(tmp_path / "guide.md"), "--dataset", "guide", "--create")
    listed = run_json("dataset", "sections", "guide", "--describe", "Guide>Storage", "Keeping tea")
    assert listed["sections"] == [
        {"name": "Guide", "segment_count": 1, "description": None},
        {"name": "Guide > Brewing", "segment_count": 1, "description": None},
        {"name": "Guide > Storage", "segment_count": 1, "description": "Keeping tea"},
    ]
    assert "1 seg  Guide > Storage  — Keeping tea" in run("dataset", "sections", "guide").stdout
    hits = run_json("search", "green tea", "--dataset", "guide", "--section", "Guide > Brewing")
    assert [hit["metadata"]["section"] for hit in hits] == ["Guide > Brewing"]
    refused = run("search", "green tea", "--dataset", "guide", "--section", " > ", code=None)
    assert refused.exit_code != 0 and "section" in refused.output
    both = run("search", "green tea", "--section", "Guide", code=None)
    assert both.exit_code != 0 and "--section" in both.output
