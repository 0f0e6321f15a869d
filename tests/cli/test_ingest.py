"""``zhiku ingest`` makes no duplicates, mirrors folders with ``--sync``; ``zhiku search`` says when
nothing was found."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.make_files import make_text


def test_ingesting_twice_skips_the_duplicate(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = make_text(tmp_path / "a.txt", "Longjing is a green tea from Hangzhou.")
    run("ingest", str(path), "--dataset", "d", "--create")
    again = run("ingest", str(path), "--dataset", "d")
    assert "skipped   a.txt" in again.output and "1 skipped as duplicates" in again.output
    hits = run("search", "Longjing green tea", "--dataset", "d", "--method", "full_text").output
    assert hits.count("a.txt") == 1
    kept = run("ingest", str(path), "--dataset", "d", "--on-duplicate", "keep").output
    assert "1 indexed" in kept


def test_sync_mirrors_a_folder_and_a_second_run_changes_nothing(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "docs"
    folder.mkdir()
    make_text(folder / "a.txt", "Alpha tea grows on the eastern hills.")
    make_text(folder / "b.txt", "Beta tea is picked in spring.")
    first = run("ingest", str(folder), "--dataset", "d", "--create", "--sync").output
    assert "2 added, 0 updated, 0 deleted, 0 unchanged, 0 failed" in first
    make_text(folder / "b.txt", "Beta tea is now picked in autumn.")
    (folder / "a.txt").unlink()
    second = run("ingest", str(folder), "--dataset", "d", "--sync").output
    assert "0 added, 1 updated, 1 deleted, 0 unchanged, 0 failed" in second
    third = run("ingest", str(folder), "--dataset", "d", "--sync").output
    assert "0 added, 0 updated, 0 deleted, 1 unchanged, 0 failed" in third
    assert "autumn" in run("search", "autumn", "--dataset", "d", "--method", "full_text").output


def test_search_says_no_hits(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("ingest", str(make_text(tmp_path / "a.txt", "Oolong tea.")), "--dataset", "d", "--create")
    found = run("search", "zzzqqq", "--dataset", "d", "--method", "full_text").output
    assert "nothing relevant found" in found


def test_no_optimize_leaves_the_index_build_for_later(run, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from zhiku.knowledge_base import Dataset

    built: list[str] = []
    monkeypatch.setattr(Dataset, "optimize", lambda self: built.append(self.name))
    path = make_text(tmp_path / "a.txt", "Longjing is a green tea from Hangzhou.")
    run("ingest", str(path), "--dataset", "d", "--create", "--no-optimize")
    assert built == []
    assert "a.txt" in run("search", "Longjing", "--dataset", "d", "--method", "full_text").output
    run("ingest", str(make_text(tmp_path / "b.txt", "Oolong tea.")), "--dataset", "d")
    assert built == ["d"]
