"""Documents and segments in the console, walked in a real headless Chromium against a real
``zhiku serve``: broken files refused beside their names while the good ones index, the live
"Documents (N)" count, a document's own page, segments added (searchable at once) and deleted,
batch actions on ticked documents from the keyboard, and the chunk preview before indexing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.console.browser import LocalServer, Pages, WebDriver, chromium, zhiku_server

GREEN = "Longjing green tea is pan-fired by hand in hot iron woks near the West Lake."
OOLONG = "Tieguanyin oolong is rolled into tight balls and partly oxidised in Anxi."
MATCHA = "Matcha is stone-ground from shade-grown tencha leaves in Uji."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("documents") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


@pytest.fixture
def pages(server: LocalServer, browser: WebDriver) -> Pages:
    return Pages.signed_in(browser, server)


def _file(folder: Path, name: str, data: bytes | str) -> Path:
    path = folder / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _completed(pages: Pages, names: set[str]) -> bool:
    statuses = pages.statuses()
    return set(statuses) == names and set(statuses.values()) == {"completed"}


def _confirm(pages: Pages) -> None:
    WebDriverWait(pages.driver, 30).until(expected_conditions.alert_is_present())
    pages.driver.switch_to.alert.accept()




@pytest.mark.parametrize(
    ("lang", "reasons"),
    [
        ("en", ("empty file", "binary content under a text file's name", "no reader for this kind of file")),
        ("zh", ("文件为空", "文件名是文本文件，内容却是二进制", "不支持这种文件类型")),
    ],
)
def test_broken_files_are_refused_beside_their_names_and_the_good_ones_index(
    pages: Pages, tmp_path: Path, lang: str, reasons: tuple[str, str, str]
) -> None:
    pages.use_language(lang)
    try:
        pages.create_dataset(f"broken files {lang}")
        files = [
            _file(tmp_path, "green.txt", GREEN),
            _file(tmp_path, "empty.md", b""),
            _file(tmp_path, "photo.txt", os.urandom(4096).replace(b"\n", b"\x00")),
            _file(tmp_path, "notes.xyz", "Notes in a format no reader knows."),
            _file(tmp_path, "oolong.md", OOLONG),
        ]
        assert pages.find("#document-total").text == "0"
        pages.find("input[name='keyword']").click()  # the reader's focus, kept while rows arrive
        pages.upload(*files)
        pages.until(
            lambda: pages.find("#upload").is_enabled() and len(pages.find_all("#upload-status li")) == 5
        )
        lines = [item.text for item in pages.find_all("#upload-status li")]
        assert lines[0] == "green.txt: ✓" and lines[4] == "oolong.md: ✓", lines
        assert lines[1:4] == [
            f"empty.md: {reasons[0]}",
            f"photo.txt: {reasons[1]}",
            f"notes.xyz: {reasons[2]}",
        ]
        pages.until(lambda: _completed(pages, {"green.txt", "oolong.md"}))
        assert pages.find("#document-total").text == "2"  # counted without a reload
        words = pages.driver.execute_script(
            "return Array.from(document.querySelectorAll('tr.doc td.words'))"
            ".map(cell => cell.textContent.trim())"
        )
        assert sorted(words) == sorted([str(len(GREEN)), str(len(OOLONG))])
    finally:
        pages.use_language("en")


def test_a_document_page_shows_what_it_is_and_adds_and_deletes_segments(pages: Pages, tmp_path: Path) -> None:
    dataset_id = pages.create_dataset("document page")
    pages.open(f"/datasets/{dataset_id}/settings")
    pages.find("#add-field input[name='name']").send_keys("year")
    pages.find("#add-field select[name='type']").send_keys("number")
    pages.submit("#add-field button")
    pages.open(f"/datasets/{dataset_id}")
    pages.upload(_file(tmp_path, "green.txt", GREEN))
    pages.until(lambda: _completed(pages, {"green.txt"}))
    pages.click("tr.doc a.doc-name")
    pages.until(lambda: pages.find_all("#document-info"))
    assert pages.find("#document-info h1").text == "green.txt"
    assert pages.find("#word-count").text == str(len(GREEN))
    assert pages.find("#segment-count").text == "1" and pages.find("#hit-count").text == "0"
    assert pages.find("#source-type").text == "Sent through the API or the console"
    assert pages.find("#rule-splitter").text == "recursive" and pages.find("#rule-max-tokens").text == "500"
    assert pages.find("#rule-doc-form").text == "paragraph"
    segments_link = pages.find("#document-segments-link").get_attribute("href")
    assert segments_link.endswith(
        f"/datasets/{dataset_id}/segments?document={pages.driver.current_url.rsplit('/', 1)[-1]}"
    )

    year = pages.find("#document-metadata input[name^='meta_']")
    year.send_keys("2025")
    pages.click("#document-metadata button")
    pages.until(
        lambda: pages.find("#document-metadata input[name^='meta_']").get_attribute("value") == "2025"
    )
    assert "/documents/" in pages.driver.current_url  # back on the document's page

    pages.click("#document-segments details.add-segment summary")
    pages.find("#new-segment").send_keys(MATCHA)
    pages.click("#save-new-segment")
    pages.until(lambda: pages.find("#segment-count").text == "2")
    assert [item.text for item in pages.find_all("#segments article.segment .content")] == [GREEN, MATCHA]

    pages.open(f"/datasets/{dataset_id}/hit-testing")
    pages.find("#query").send_keys("stone-ground tencha")
    pages.click("#run")
    pages.until(lambda: pages.find_all("li.hit"))
    assert MATCHA in pages.find("li.hit").text  # searchable at once

    pages.open(f"/datasets/{dataset_id}")
    hits = pages.find("tr.doc td.hits").text
    assert int(hits) >= 1  # each hit the search returned counted
    pages.click("tr.doc a.doc-name")
    assert pages.find("#hit-count").text == hits
    matcha = next(a for a in pages.find_all("article.segment") if MATCHA in a.text)
    matcha.find_element("css selector", "button.delete-segment").click()
    _confirm(pages)
    pages.until(lambda: pages.find("#segment-count").text == "1")
    assert MATCHA not in pages.find("#segments").text
    pages.open(f"/datasets/{dataset_id}/hit-testing")
    pages.find("#query").send_keys("stone-ground tencha")
    pages.click("#run")
    pages.until(lambda: pages.find_all("#hits"))
    assert all(MATCHA not in hit.text for hit in pages.find_all("li.hit"))


def test_batch_actions_on_ticked_documents_from_the_keyboard(pages: Pages, tmp_path: Path) -> None:
    pages.create_dataset("batch")
    names = {"green.txt": GREEN, "oolong.txt": OOLONG, "matcha.txt": MATCHA}
    pages.upload(*(_file(tmp_path, name, text) for name, text in names.items()))
    pages.until(lambda: _completed(pages, set(names)))
    pages.driver.refresh()

    def tick(name: str) -> None:
        row = next(
            r for r in pages.find_all("tr.doc") if r.find_element("css selector", ".doc-name").text == name
        )
        row.find_element("css selector", "input.pick").send_keys(Keys.SPACE)

    def enabled_of() -> dict[str, str]:
        return {
            row.find_element("css selector", ".doc-name").text: row.find_elements("css selector", "td")[
                6
            ].text
            for row in pages.find_all("tr.doc")
        }

    tick("green.txt")
    tick("oolong.txt")
    assert pages.find("#batch-count").text == "2 selected"
    label = pages.driver.execute_script(
        "return document.querySelector('tr.doc input.pick').getAttribute('aria-labelledby').split(' ')"
        ".map(id => document.getElementById(id).textContent).join(' ')"
    )
    assert label.startswith("Select ") and label.removeprefix("Select ") in names
    pages.find("#batch-form button[value='disable']").send_keys(Keys.ENTER)
    pages.until(lambda: enabled_of() == {"green.txt": "no", "oolong.txt": "no", "matcha.txt": "yes"})

    pages.find("#select-all").send_keys(Keys.SPACE)
    assert pages.find("#batch-count").text == "3 selected"
    pages.find("#batch-form button[value='archive']").send_keys(Keys.ENTER)
    pages.until(lambda: set(enabled_of().values()) == {"archived"})

    tick("matcha.txt")
    pages.find("#batch-form button[value='delete']").send_keys(Keys.ENTER)
    pages.driver.switch_to.alert.dismiss()  # asked first; dismissed, nothing goes
    assert len(pages.find_all("tr.doc")) == 3
    pages.find("#batch-form button[value='delete']").send_keys(Keys.ENTER)
    _confirm(pages)
    pages.until(lambda: sorted(pages.statuses()) == ["green.txt", "oolong.txt"])
    assert pages.find("#document-total").text == "2"


@pytest.mark.parametrize(("lang", "title"), [("en", "Preview of"), ("zh", "分段预览：")])
def test_preview_chunks_shows_the_segments_a_file_would_make_and_indexes_nothing(
    pages: Pages, tmp_path: Path, lang: str, title: str
) -> None:
    pages.use_language(lang)
    try:
        dataset_id = pages.create_dataset(f"preview {lang}")
        pages.open(f"/datasets/{dataset_id}/settings")
        max_tokens = pages.find("input[name='max_tokens']")
        max_tokens.clear()
        max_tokens.send_keys("40")
        overlap = pages.find("input[name='chunk_overlap']")
        overlap.clear()
        overlap.send_keys("0")
        pages.submit("#save")
        pages.open(f"/datasets/{dataset_id}")
        text = "\n\n".join(
            f"Paragraph {n}: " + "the tea leaves are picked and withered " * 3 for n in range(4)
        )
        pages.find("#file-input").send_keys(str(_file(tmp_path, "long.txt", text)))
        pages.click("#preview-chunks")
        pages.until(lambda: pages.find_all("#preview li.preview-segment"))
        assert pages.find("#preview h2").text == f"{title} long.txt"
        tokens = [int(item.text) for item in pages.find_all("#preview .preview-tokens")]
        assert len(tokens) >= 4 and all(0 < count <= 40 for count in tokens)
        assert pages.find("#preview li.preview-segment .content").text.startswith("Paragraph 0:")
        pages.driver.refresh()
        assert pages.find("#document-total").text == "0"  # nothing indexed
    finally:
        pages.use_language("en")


def _tab_to(pages: Pages, css: str, limit: int = 80) -> None:
    """Press Tab (nothing else) until the element ``css`` has the focus."""
    for _ in range(limit):
        if pages.driver.execute_script("return document.activeElement.matches(arguments[0])", css):
            return
        ActionChains(pages.driver).send_keys(Keys.TAB).perform()
    raise AssertionError(f"Tab never reached {css}")


def _keys(pages: Pages, *keys: str) -> None:
    ActionChains(pages.driver).send_keys(*keys).perform()


def test_create_upload_and_add_a_segment_with_the_keyboard_alone(pages: Pages, tmp_path: Path) -> None:
    pages.open("/datasets")
    _tab_to(pages, "#dataset-name")
    _keys(pages, "keyboard only", Keys.ENTER)
    pages.until(lambda: pages.find_all("#upload-form"))
    _tab_to(pages, "#file-input")
    # the file dialog is the system's own: the chosen path goes to the focused input
    pages.driver.switch_to.active_element.send_keys(str(_file(tmp_path, "green.txt", GREEN)))
    _tab_to(pages, "#upload")
    _keys(pages, Keys.ENTER)
    pages.until(lambda: _completed(pages, {"green.txt"}))
    pages.until(lambda: pages.driver.execute_script("return document.activeElement.id") == "upload")
    _tab_to(pages, "tr.doc a.doc-name")
    _keys(pages, Keys.ENTER)
    pages.until(lambda: pages.find_all("#document-info"))
    _tab_to(pages, "details.add-segment summary")
    _keys(pages, Keys.SPACE)
    _tab_to(pages, "#new-segment")
    _keys(pages, MATCHA)
    _tab_to(pages, "#save-new-segment")
    _keys(pages, Keys.SPACE)
    pages.until(lambda: pages.find("#segment-count").text == "2")
    assert MATCHA in pages.find("#segments").text
