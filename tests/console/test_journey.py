"""One whole journey through the console in a real headless Chromium against a real
``zhiku serve``, in English and in Chinese: create a dataset, upload files (one broken), watch
them to completion, browse the segments, edit one and disable another, delete a document, hit
test, narrow the hit test by a metadata field, ask in chat and reopen the conversation.

Every wait is for the page to show the change (no sleeps, no timings)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

from tests.console.browser import By, LocalServer, Pages, WebDriver, chromium, zhiku_server
from tests.fixtures.make_files import make_truncated_pdf

GREEN = "Longjing green tea is pan-fired by hand in hot iron woks near the West Lake."
EDITED = "Longjing green tea is pan-fired by hand in Hangzhou, then cooled on bamboo trays."
OOLONG = "Tieguanyin oolong is rolled into tight balls and partly oxidised in Anxi."
PUER = "Pu'er tea from Yunnan is pressed into cakes and aged for years."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("journey") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver




def _confirm(pages: Pages) -> None:
    WebDriverWait(pages.driver, 30).until(expected_conditions.alert_is_present())
    pages.driver.switch_to.alert.accept()


def _article(pages: Pages, text: str) -> object:
    return next(article for article in pages.find_all("article.segment") if text in article.text)


def _hits(pages: Pages, query: str, region: str | None = None) -> list[str]:
    """The hit test's hits (their text), run with the form as a user fills it."""
    pages.find("#query").clear()
    pages.find("#query").send_keys(query)
    if region is not None:
        pages.find("select[name='filter_0_name'] option[value='region']").click()
        pages.find("select[name='filter_0_op'] option[value='is']").click()
        pages.find("input[name='filter_0_value']").clear()
        pages.find("input[name='filter_0_value']").send_keys(region)
    pages.click("#run")
    pages.until(lambda: pages.find_all("li.hit") or pages.find_all("#nothing-found"))
    return [hit.text for hit in pages.find_all("li.hit")]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_whole_journey_from_an_empty_dataset_to_a_reopened_conversation(
    server: LocalServer, browser: WebDriver, tmp_path: Path, lang: str
) -> None:
    pages = Pages.signed_in(browser, server)
    pages.use_language(lang)
    try:
        # create, with a metadata field
        pages.find("#dataset-name").send_keys(f"journey {lang}")
        pages.find("#index-method option[value='paragraph']").click()
        pages.click("#create")
        pages.until(lambda: pages.find_all("#upload-form"))
        dataset_id = pages.driver.current_url.rsplit("/", 1)[-1]
        pages.open(f"/datasets/{dataset_id}/settings")
        pages.find("#add-field input[name='name']").send_keys("region")
        pages.click("#add-field button")
        pages.until(
            lambda: [
                i for i in pages.find_all("#fields td.name input") if i.get_attribute("value") == "region"
            ]
        )

        # upload three good files and a broken one; watch them to completion
        files = []
        for name, text in (("green.txt", GREEN), ("oolong.txt", OOLONG), ("puer.txt", PUER)):
            (tmp_path / name).write_text(text, encoding="utf-8")
            files.append(tmp_path / name)
        files.append(make_truncated_pdf(tmp_path / "broken.pdf", ["this file was cut in half"]))
        pages.open(f"/datasets/{dataset_id}")
        pages.upload(*files)
        expected = {"green.txt": "completed", "oolong.txt": "completed", "puer.txt": "completed"}
        pages.until(lambda: pages.statuses() == {**expected, "broken.pdf": "error"})
        pages.shot(f"journey-{lang}-documents")

        # browse the segments: edit one, disable another
        pages.open(f"/datasets/{dataset_id}/segments")
        pages.until(lambda: len(pages.find_all("article.segment")) == 3)
        green = _article(pages, GREEN)
        green.find_element(By.CSS_SELECTOR, "details.edit summary").click()
        content = green.find_element(By.CSS_SELECTOR, "textarea[name='content']")
        content.clear()
        content.send_keys(EDITED)
        green.find_element(By.CSS_SELECTOR, "button.save-segment").click()
        pages.until(lambda: any(EDITED in a.text for a in pages.find_all("article.segment .content")))
        _article(pages, OOLONG).find_element(By.CSS_SELECTOR, "button.toggle").click()
        pages.until(lambda: "disabled" in _article(pages, OOLONG).get_attribute("class"))

        # delete a document; give one a region
        pages.open(f"/datasets/{dataset_id}")
        row = next(r for r in pages.find_all("tr.doc") if "puer.txt" in r.text)
        row.find_element(By.CSS_SELECTOR, "button.delete").click()
        _confirm(pages)
        pages.until(lambda: set(pages.statuses()) == {"green.txt", "oolong.txt", "broken.pdf"})
        next(a for a in pages.find_all("tr.doc a.doc-name") if a.text == "green.txt").click()
        pages.until(lambda: pages.find_all("#document-metadata"))
        pages.find("#document-metadata input[name^='meta_']").send_keys("Zhejiang")
        pages.click("#document-metadata button")
        pages.until(
            lambda: pages.find("#document-metadata input[name^='meta_']").get_attribute("value") == "Zhejiang"
        )

        # hit test: the edit is found, the disabled segment and the deleted document are not
        pages.open(f"/datasets/{dataset_id}/hit-testing")
        found = _hits(pages, "pan-fired in Hangzhou on bamboo trays")
        assert found and "bamboo trays" in found[0]
        assert not any(
            "Tieguanyin" in hit or "Yunnan" in hit for hit in _hits(pages, "Tieguanyin oolong Yunnan")
        )
        # a metadata filter keeps only the documents whose region is the one asked for
        assert len(_hits(pages, "tea", region="Zhejiang")) == 1
        assert _hits(pages, "tea", region="Fujian") == [] and pages.find_all("#nothing-found")
        pages.shot(f"journey-{lang}-hit-testing")

        # ask in chat, then reopen the conversation
        pages.open("/chat")
        question = f"How is Longjing tea made? ({lang})"
        pages.find("#question").send_keys(question)
        pages.click("#ask")
        conversation = pages.until(lambda: pages.find("#conversation_id").get_attribute("value"))
        pages.until(
            lambda: (
                pages.find_all("#messages .message.assistant .text")
                and any(text.text.strip() for text in pages.find_all("#messages .message.assistant .text"))
            )
        )
        pages.open("/datasets")
        pages.open(f"/chat?conversation={conversation}")
        assert question in pages.find("#messages").text
        assert pages.find("#messages .message.assistant .text").text.strip()
        assert len(pages.find_all("#conversations li.on")) == 1  # listed, and shown as the open one
        assert pages.driver.execute_script("return document.documentElement.lang") == (
            "zh-CN" if lang == "zh" else "en"
        )
        pages.shot(f"journey-{lang}-chat")
    finally:
        pages.use_language("en")
