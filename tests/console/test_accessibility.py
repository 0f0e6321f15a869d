"""Every console page, in English and in Chinese, checked by axe-core (the copy the
``axe-selenium-python`` package ships) in a real headless Chromium: no serious or critical
violation; and no page loads anything from another origin (no CDN)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.browser import By, LocalServer, Pages, WebDriver, chromium, zhiku_server
from tests.fixtures.make_files import make_truncated_pdf

axe_selenium_python = pytest.importorskip(
    "axe_selenium_python", reason="needs axe-selenium-python (the dev extra)"
)

#: axe's impact levels a page may not have.
BLOCKING = frozenset({"serious", "critical"})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("accessibility") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _problems(pages: Pages) -> list[str]:
    """What axe finds serious or critical on the open page, and any request to another origin."""
    axe = axe_selenium_python.Axe(pages.driver)
    axe.inject()
    results: dict[str, Any] = axe.run()
    found = [
        f"{violation['id']} ({violation['impact']}): {node['target']} {node.get('failureSummary', '')}"
        for violation in results["violations"]
        if violation["impact"] in BLOCKING
        for node in violation["nodes"]
    ]
    loaded = pages.driver.execute_script(
        "return performance.getEntriesByType('resource').map(entry => entry.name)"
    )
    found += [f"loaded from elsewhere: {url}" for url in loaded if not url.startswith(pages.base + "/")]
    return found


def _walk(pages: Pages, paths: list[str], prefix: str) -> dict[str, list[str]]:
    problems = {}
    for number, path in enumerate(paths):
        pages.open(path)
        pages.shot(f"a11y-{prefix}-{number:02d}")
        found = _problems(pages)
        if found:
            problems[path] = found
    return problems


def test_every_page_passes_axe_in_both_languages(
    server: LocalServer, browser: WebDriver, tmp_path: Path
) -> None:
    signed_out = Pages(browser, server.url.removesuffix("/v1"), [server.key])
    problems = _walk(signed_out, ["/signin"], "signin")

    pages = Pages.signed_in(browser, server)
    dataset_id = pages.create_dataset("茶 tea")
    text = tmp_path / "longjing.txt"
    text.write_text("Longjing tea from Hangzhou is pan-fired by hand in hot iron woks.", encoding="utf-8")
    broken = make_truncated_pdf(tmp_path / "broken.pdf", ["this file was cut in half"])
    pages.upload(text, broken)  # the failed one shows every pipeline step still to come
    pages.until(lambda: pages.statuses() == {"longjing.txt": "completed", "broken.pdf": "error"})
    pages.open(f"/datasets/{dataset_id}/settings")
    pages.find("#add-field input[name='name']").send_keys("year")
    pages.submit("#add-field button")
    pages.open("/chat")
    pages.find("#question").send_keys("How is Longjing tea made?")
    pages.click("#ask")
    pages.until(lambda: pages.find("#conversation_id").get_attribute("value"))
    conversation = pages.find("#conversation_id").get_attribute("value")
    pages.open(f"/datasets/{dataset_id}/segments")
    segment_id = pages.find("article.segment").get_attribute("data-segment")
    pages.open(f"/datasets/{dataset_id}")
    documents = {
        row.find_element(By.CSS_SELECTOR, ".doc-name").text: row.get_attribute("data-document")
        for row in pages.find_all("tr.doc")
    }

    paths = [
        "/datasets",
        f"/datasets/{dataset_id}",
        f"/datasets/{dataset_id}/segments",
        f"/datasets/{dataset_id}/segments/{segment_id}",
        f"/datasets/{dataset_id}/documents/{documents['longjing.txt']}",
        f"/datasets/{dataset_id}/documents/{documents['broken.pdf']}",
        f"/datasets/{dataset_id}/hit-testing",
        f"/datasets/{dataset_id}/hit-testing?query=Longjing",
        f"/datasets/{dataset_id}/settings",
        "/chat",
        f"/chat?conversation={conversation}",
        "/api-access",
        "/datasets/no-such-dataset",
    ]
    problems |= _walk(pages, paths, "en")
    pages.open("/datasets")
    pages.click("#switch-language")
    pages.until(lambda: pages.driver.execute_script("return document.documentElement.lang") == "zh-CN")
    problems |= {f"zh {path}": found for path, found in _walk(pages, paths, "zh").items()}
    pages.click("#switch-language")  # back to English: wait for it, or the next page load races it
    pages.until(lambda: pages.driver.execute_script("return document.documentElement.lang") == "en")

    # a new key's secret shown once, and a form refused beside its field
    pages.open("/api-access")
    pages.find("#key-name").send_keys("axe")
    pages.click("#create-key")
    pages.until(lambda: pages.find_all("#secret-value"))
    if found := _problems(pages):
        problems["api-access new key"] = found
    pages.open("/datasets")
    pages.find("#dataset-name").send_keys("茶 tea")
    pages.click("#create")
    pages.until(lambda: pages.find_all("#error-create-name"))
    if found := _problems(pages):
        problems["datasets refused"] = found

    # a hit test with its results drawn
    pages.open(f"/datasets/{dataset_id}/hit-testing")
    pages.find("#query").send_keys("pan-fired Longjing")
    pages.click("#run")
    pages.until(lambda: pages.find_all("li.hit"))
    if found := _problems(pages):
        problems["hit-testing results"] = found
    # the chunk preview drawn under the upload form, and documents ticked for a batch action
    pages.open(f"/datasets/{dataset_id}")
    pages.find("#file-input").send_keys(str(text))
    pages.click("#preview-chunks")
    pages.until(lambda: pages.find_all("#preview li.preview-segment"))
    pages.click("#select-all")
    if found := _problems(pages):
        problems["chunk preview"] = found
    assert not problems, "\n".join(f"{path}:\n  " + "\n  ".join(found) for path, found in problems.items())
