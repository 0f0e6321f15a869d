"""The console's traps on its common paths, each walked in a real headless Chromium against a
real ``zhiku serve``: files sent once however often Upload is pressed, a file already indexed
named and offered skip / replace / keep both, edited text re-keyworded, reopened conversations
as they were shown, metadata as typed, and focus kept while documents index.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.browser import By, LocalServer, Pages, WebDriver, chromium, zhiku_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("traps") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture
def pages(server: LocalServer, browser: WebDriver) -> Pages:
    return Pages.signed_in(browser, server)


def _texts(folder: Path, texts: dict[str, str]) -> list[Path]:
    paths = []
    for name, text in texts.items():
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def _all_completed(pages: Pages, count: int) -> bool:
    statuses = pages.statuses()
    return len(statuses) >= count and set(statuses.values()) == {"completed"}


def _duplicate_line(pages: Pages) -> Any:
    """The upload's line offering skip / replace / keep both, once it shows."""
    return pages.until(
        lambda: pages.find_all("#upload-status li button[data-choice]") and pages.find("#upload-status li")
    )


def test_pressing_upload_while_files_go_sends_them_once(pages: Pages, tmp_path: Path) -> None:
    pages.create_dataset("upload once")
    files = _texts(
        tmp_path,
        {
            "oolong.txt": "Oolong tea is partly oxidised, between green and black tea.",
            "white.txt": "White tea is withered and dried, hardly processed at all.",
            "yellow.txt": "Yellow tea is smothered after fixing, which mellows its taste.",
        },
    )
    pages.upload(*files)
    pages.click("#upload")  # pressed again while the files are still going
    pages.until(
        lambda: pages.find("#upload").is_enabled() and pages.find("#upload-status").text.count("✓") == 3
    )
    pages.until(lambda: _all_completed(pages, 3))
    pages.driver.refresh()
    assert sorted(pages.statuses()) == ["oolong.txt", "white.txt", "yellow.txt"]
    assert pages.document_count() == 3


def test_a_file_already_indexed_is_named_and_offered_skip_replace_or_keep_both(
    pages: Pages, tmp_path: Path
) -> None:
    pages.create_dataset("duplicates")
    text = "Jasmine tea is green tea scented with jasmine blossoms overnight."
    (first,) = _texts(tmp_path, {"jasmine.txt": text})
    pages.upload(first)
    pages.until(lambda: _all_completed(pages, 1))

    (again,) = _texts(tmp_path, {"jasmine copy.txt": text})
    pages.upload(again)
    line = _duplicate_line(pages)
    assert "already indexed as “jasmine.txt”" in line.text
    assert pages.document_count() == 1  # nothing indexed behind the user's back

    line.find_element(By.CSS_SELECTOR, "button[data-choice='keep']").click()
    pages.until(lambda: pages.find("#upload-status li").text == "jasmine copy.txt: ✓")
    pages.until(lambda: _all_completed(pages, 2))
    assert sorted(pages.statuses()) == ["jasmine copy.txt", "jasmine.txt"]

    pages.upload(again)
    _duplicate_line(pages).find_element(By.CSS_SELECTOR, "button[data-choice='replace']").click()
    pages.until(lambda: pages.find("#upload-status li").text == "jasmine copy.txt: ✓")
    pages.until(lambda: _all_completed(pages, 2))

    pages.upload(again)
    _duplicate_line(pages).find_element(By.CSS_SELECTOR, "button[data-choice='skip']").click()
    assert "skipped" in pages.find("#upload-status li").text
    pages.driver.refresh()
    assert pages.document_count() == 2


def _keywords(pages: Pages) -> set[str]:
    return {badge.text.lower() for badge in pages.find_all("article.segment .keywords .badge")}


def test_edited_text_brings_its_own_keywords_unless_the_keywords_were_edited(
    pages: Pages, tmp_path: Path
) -> None:
    dataset_id = pages.create_dataset("keywords")
    pages.upload(*_texts(tmp_path, {"longjing.txt": "Longjing tea from Hangzhou is pan-fired in woks."}))
    pages.until(lambda: _all_completed(pages, 1))
    pages.open(f"/datasets/{dataset_id}/segments")
    assert "hangzhou" in _keywords(pages)

    def edit(content: str | None = None, keywords: str | None = None) -> None:
        pages.find("article.segment details.edit summary").click()
        if content is not None:
            area = pages.find("article.segment textarea[name='content']")
            area.clear()
            area.send_keys(content)
        if keywords is not None:
            field = pages.find("article.segment input[name='keywords']")
            field.clear()
            field.send_keys(keywords)
        pages.click("article.segment button.save-segment")

    edit(content="Biluochun tea from Suzhou is rolled into tight spirals.")
    pages.until(lambda: "Biluochun" in pages.find("article.segment .content").text)
    words = _keywords(pages)
    assert "suzhou" in words and not words & {"hangzhou", "longjing", "woks"}

    edit(content="Biluochun leaves are picked in early spring.", keywords="spring tea, 碧螺春")
    pages.until(lambda: "early spring" in pages.find("article.segment .content").text)
    assert _keywords(pages) == {"spring tea", "碧螺春"}
