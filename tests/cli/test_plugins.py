"""``zhiku plugins``: every registry with its built-in names and the installed entry points."""

from __future__ import annotations

from pathlib import Path

import pytest

from zhiku.plugins import REGISTRIES


def _install(site: Path, entry_points: str) -> None:
    """A distribution declaring ``entry_points`` in group zhiku.plugins, found on ``sys.path``."""
    info = site / "zhiku_tea_plugins-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zhiku-tea-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[zhiku.plugins]\n{entry_points}\n")


def test_plugins_lists_every_registry_with_built_in_and_entry_point_names(
    run, run_json, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    _install(
        tmp_path / "site",
        "splitters.sentences = zhiku_tea_plugins:SentenceSplitter\n"
        "splitter.typo = zhiku_tea_plugins:SentenceSplitter",
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))

    listed = run_json("plugins")
    kinds = {registry["kind"]: registry for registry in listed["registries"]}
    assert len(kinds) == len(REGISTRIES)
    assert {
        "extractors",
        "cleaners",
        "splitters",
        "index_processors",
        "embedding",
        "vector",
        "fulltext",
        "keyword",
    } <= set(kinds)
    splitters = kinds["splitters"]
    assert {"recursive", "fixed_separator"} <= set(splitters["registered"])
    assert splitters["entry_points"] == ["sentences"]
    assert "sentences" in splitters["names"] and "recursive" in splitters["names"]
    assert "pdf" in kinds["extractors"]["names"] and "qa_model" in kinds["index_processors"]["names"]
    assert {"function_call", "react"} <= set(kinds["routers"]["names"])
    assert kinds["keyword"]["registered"] == ["postings"]
    assert listed["unclaimed_entry_points"] == ["splitter.typo"]

    text = run("plugins").output
    assert "splitters — split text into chunks" in text and "sentences (entry point)" in text
    assert "never loaded): splitter.typo" in text
