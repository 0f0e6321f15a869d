"""Entry-point plug-ins: read once, read again when a package is installed while running."""

from __future__ import annotations

from pathlib import Path

import pytest

from zhiku.core.registry import Registry, plugin_entry_points


def _install(site: Path, name: str, entry_points: str) -> None:
    """A distribution ``name`` declaring ``entry_points`` in group zhiku.plugins, in ``site``."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[zhiku.plugins]\n{entry_points}\n")


def test_entry_points_are_read_once_while_nothing_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "site").mkdir()
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    assert plugin_entry_points() is plugin_entry_points()


def test_a_package_installed_while_running_is_found_at_the_next_lookup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    registry: Registry[object] = Registry("teapots")
    assert registry.installed() == []

    _install(site, "zhiku_teapots", "teapots.yixing = zhiku_teapots:Yixing")

    assert registry.installed() == ["yixing"]
