"""The documentation site builds with MkDocs in strict mode (a warning, a broken link or anchor
fails it) and fetches nothing from other sites; ``make docs`` builds it the same way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.docs_reference.offline import remote_fetches
from tests.docs.test_reference import ROOT


def test_what_a_built_page_would_fetch_from_other_sites_is_found(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text(
        '<link rel="stylesheet" href="https://cdn.example/x.css"><link rel="canonical" href="https://a.example/">'
        '<script src="//cdn.example/x.js"></script><script src="assets/local.js"></script>'
        '<a href="https://github.com/">a link to follow</a><img src="https://img.example/i.png">'
    )
    (tmp_path / "extra.css").write_text('@import "https://fonts.googleapis.com/css?family=Roboto";')
    assert remote_fetches(tmp_path) == [
        "index.html: <link href=https://cdn.example/x.css>",
        "index.html: <script src=//cdn.example/x.js>",
        "index.html: <img src=https://img.example/i.png>",
        "extra.css: https://fonts.googleapis.com/css?family=Roboto",
    ]


def test_the_site_builds_strictly_and_offline(tmp_path: Path) -> None:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
    pytest.importorskip("material", reason="the docs extra is not installed (pip install -e '.[docs]')")
    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    assert (site / "reference" / "http-api" / "index.html").is_file()
    assert remote_fetches(site) == []
    assert "font.googleapis" not in (site / "index.html").read_text(encoding="utf-8")
