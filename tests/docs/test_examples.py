"""Every code block of README.md and the documentation runs (CONTRIBUTING.md, "Documentation"):
one test per page, its blocks in order; a failure names the block's file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.page_runner import ExampleFailed, Page

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_examples_run(page: Path, tmp_path: Path) -> None:
    with Page(page, tmp_path) as run:
        try:
            run.run()
        except ExampleFailed as failed:
            message = str(failed)
        else:
            return
    pytest.fail(message, pytrace=False)  # the block's place and output say it all
