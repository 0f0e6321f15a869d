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
    rows = pages.rows()
    return len(rows) >= count and {status for _, status in rows} == {"completed"}


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
    # the document that held it is indexed again from the upload, under the upload's name
    pages.until(lambda: pages.rows() == [("jasmine copy.txt", "completed")] * 2)

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


_ANSWER_SHAPE = """
const message = Array.from(document.querySelectorAll('#messages .message.assistant')).pop();
const text = message.querySelector('.text');
const box = message.getBoundingClientRect();
return {
  text: text.innerText,
  citations: Array.from(text.querySelectorAll('a.citation')).map(a => [a.textContent, a.href]),
  sources: Array.from(message.querySelectorAll('.sources li')).map(li => [li.value, li.innerText]),
  above: Math.round(text.getBoundingClientRect().top - box.top),
  below: Math.round(box.bottom - message.lastElementChild.getBoundingClientRect().bottom),
};
"""


def test_a_reopened_conversation_shows_the_answer_as_the_chat_did(pages: Pages, tmp_path: Path) -> None:
    pages.create_dataset("conversations")
    passage = "Puer tea from Yunnan is fermented and then aged for many years."
    pages.upload(*_texts(tmp_path, {"puer.txt": passage}))
    pages.until(lambda: _all_completed(pages, 1))
    pages.open("/chat")
    pages.find("#question").send_keys("How is Puer tea made?")
    pages.click("#ask")
    pages.until(lambda: pages.find_all("#messages .assistant .text a.citation"))
    conversation = pages.until(lambda: pages.find("#conversation_id").get_attribute("value"))
    listed = pages.find_all(f"#conversations li.on a[href$='conversation={conversation}']")
    assert [link.text for link in listed] == ["How is Puer tea made?"]  # listed without a reload
    live = pages.driver.execute_script(_ANSWER_SHAPE)
    assert live["citations"] and live["citations"][0][0] == "[1]"

    pages.open(f"/chat?conversation={pages.find('#conversation_id').get_attribute('value')}")
    reopened = pages.driver.execute_script(_ANSWER_SHAPE)
    assert reopened == live
    assert reopened["sources"][0] == [1, "puer.txt"]


def _add_field(pages: Pages, dataset_id: str, name: str, kind: str) -> None:
    pages.open(f"/datasets/{dataset_id}/settings")
    form = pages.find("#add-field")
    form.find_element(By.CSS_SELECTOR, "input[name='name']").send_keys(name)
    form.find_element(By.CSS_SELECTOR, f"select[name='type'] option[value='{kind}']").click()
    form.find_element(By.CSS_SELECTOR, "button").click()
    names = "#fields td input[name='name']"
    pages.until(lambda: name in [field.get_attribute("value") for field in pages.find_all(names)])


def _metadata_form(pages: Pages) -> Any:
    details = pages.find("tr.doc details.meta")
    if details.get_attribute("open") is None:
        details.find_element(By.CSS_SELECTOR, "summary").click()
    return details


def _fill(pages: Pages, values: list[str]) -> None:
    inputs = _metadata_form(pages).find_elements(By.CSS_SELECTOR, "input[name^='meta_']")
    for field, value in zip(inputs, values, strict=True):
        field.clear()
        field.send_keys(value)
    pages.click("tr.doc details.meta button")


def test_metadata_shows_values_as_typed_and_errors_beside_their_field(pages: Pages, tmp_path: Path) -> None:
    dataset_id = pages.create_dataset("metadata")
    pages.upload(*_texts(tmp_path, {"tieguanyin.txt": "Tieguanyin is an oolong tea from Anxi in Fujian."}))
    pages.until(lambda: _all_completed(pages, 1))
    _add_field(pages, dataset_id, "year", "number")
    _add_field(pages, dataset_id, "published", "time")

    pages.open(f"/datasets/{dataset_id}")
    _fill(pages, ["2025", "2025-01-01"])
    pages.until(lambda: pages.find_all("tr.doc details.meta"))
    summary = [value.text for value in pages.find_all("tr.doc details.meta summary .meta-value")]
    assert summary == ["year: 2025", "published: 1/1/2025"]  # in the English page's locale
    inputs = _metadata_form(pages).find_elements(By.CSS_SELECTOR, "input[name^='meta_']")
    assert [field.get_attribute("value") for field in inputs] == ["2025", "2025-01-01"]

    _fill(pages, ["twenty twenty-five", "2025-01-01"])
    error = pages.until(lambda: pages.find_all(".field-error") and pages.find(".field-error"))
    assert error.text.startswith("year:") and "meta_" not in pages.find("main").text
    year = _metadata_form(pages).find_elements(By.CSS_SELECTOR, "input[name^='meta_']")[0]
    assert year.get_attribute("value") == "twenty twenty-five"
    assert year.get_attribute("aria-invalid") == "true"

    pages.open(f"/datasets/{dataset_id}/hit-testing")
    pages.find("#query").send_keys("oolong from Anxi")
    pages.click("#run")
    badges = pages.until(lambda: [badge.text for badge in pages.find_all("li.hit .badge.meta")])
    assert badges == ["year: 2025", "published: 1/1/2025"]

    pages.find("select[name='filter_0_name'] option[value='year']").click()
    pages.find("select[name='filter_0_op'] option[value='≥']").click()
    pages.find("input[name='filter_0_value']").send_keys("recent")
    pages.click("#run")
    beside = "#error-hit-filter_0_value"
    error = pages.until(lambda: pages.find_all(beside) and pages.find(beside))
    assert error.text == "a number"  # beside the value typed, which names its field
    assert pages.find("#query").get_attribute("value") == "oolong from Anxi"
    assert pages.find("select[name='filter_0_name']").get_attribute("value") == "year"
    assert pages.find("select[name='filter_0_op']").get_attribute("value") == "≥"
    assert pages.find("input[name='filter_0_value']").get_attribute("value") == "recent"


def test_keyboard_focus_stays_put_while_documents_index(pages: Pages, tmp_path: Path) -> None:
    pages.create_dataset("focus")
    first, second = _texts(
        tmp_path,
        {
            "keemun.txt": "Keemun is a black tea from Qimen in Anhui, with a smoky, winey aroma.",
            "dianhong.txt": "Dianhong is a black tea from Yunnan with golden buds.",
        },
    )
    pages.upload(first)
    pages.until(lambda: _all_completed(pages, 1))

    pages.upload(second)  # the rows now update every second until it is indexed
    probe = pages.find("tr.doc[data-status='completed'] button[data-action='disable']")
    pages.driver.execute_script("arguments[0].dataset.probe = 'focused'; arguments[0].focus()", probe)
    pages.until(lambda: pages.status_of("dianhong.txt") == "completed")
    focused = pages.driver.execute_script("return document.activeElement.dataset.probe || null")
    assert focused == "focused"
    announced = pages.find("#rows-announcer")
    assert announced.get_attribute("aria-live") == "polite"
    pages.until(lambda: "dianhong.txt" in announced.get_attribute("textContent"))
