"""The console end to end in a real headless Chromium (Selenium) against a real ``zhiku serve``.

Sign in; create a dataset; upload a PDF, a DOCX, a broken PDF and a text file holding a
``<script>``; watch them reach ``completed`` (the broken one ``error``, then retried) without
reloading; hit-test and read each channel's score; edit a segment and find the edit; follow a
chat citation; refuse a POST without the CSRF token; a dataset-scoped key sees one dataset; no
API key in any page, URL or cookie. Screenshots of every page go to ``test-artifacts/console``.

Skipped when Chromium or its driver is missing (``scripts/ci_browser.sh`` installs them in CI).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.browser import By, LocalServer, Pages, WebDriver, chromium, zhiku_server
from tests.fixtures.make_files import make_docx, make_pdf, make_truncated_pdf

PDF_PASSAGE = "Longjing tea from Hangzhou is pan-fired by hand in hot iron woks."
DOCX_PASSAGE = "Puer tea from Yunnan is fermented and then aged for many years."
EDITED = "Edited: Longjing leaves are flattened against the wok by the palm."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("browser") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _scoped_key(server: LocalServer, dataset_id: str) -> str:
    created = subprocess.run(
        server._cli("apikey", "create", "--name", "scoped", "--dataset", dataset_id),
        capture_output=True,
        text=True,
        env=server.env,
        timeout=120,
        check=True,
    )
    return created.stdout.strip()


def test_the_console_in_a_real_browser(server: LocalServer, browser: WebDriver, tmp_path: Path) -> None:
    base = server.url.removesuffix("/v1")
    pages = Pages(browser, base, [server.key])

    # sign in
    pages.open("/datasets")
    assert "/signin" in browser.current_url
    pages.shot("01-signin")
    pages.find("#secret").send_keys(server.key)
    pages.click("#signin")
    pages.until(lambda: browser.current_url.endswith("/datasets"))
    cookie = browser.get_cookie("zhiku_console")
    assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Lax"

    # create a dataset
    pages.find("#dataset-name").send_keys("茶 tea")
    pages.click("#create")
    pages.until(lambda: browser.find_elements(By.ID, "upload-form"))
    dataset_url = browser.current_url
    dataset_id = dataset_url.rsplit("/", 1)[-1]

    # upload several files at once; progress updates in the page without a reload
    pdf = make_pdf(tmp_path / "longjing.pdf", [f"Green teas\n{PDF_PASSAGE}\nThe leaves stay green."])
    docx = make_docx(tmp_path / "puer.docx", title="Dark teas", sections=[("Puer", [DOCX_PASSAGE])])
    broken = make_truncated_pdf(tmp_path / "broken.pdf", ["this file was cut in half"])
    script = tmp_path / "script.txt"
    script.write_text("<script>document.title='pwned'</script> Chamomile is not a tea.", encoding="utf-8")
    browser.execute_script("window.notReloaded = true")
    pages.upload(pdf, docx, broken, script)
    pages.until(lambda: pages.status_of("longjing.pdf") is not None)
    pages.shot("02-documents-indexing")
    pages.until(
        lambda: (
            pages.status_of("longjing.pdf") == "completed"
            and pages.status_of("puer.docx") == "completed"
            and pages.status_of("script.txt") == "completed"
            and pages.status_of("broken.pdf") == "error"
        )
    )
    assert browser.execute_script("return window.notReloaded") is True
    error_row = pages.find("tr.doc[data-status='error']")
    assert error_row.find_element(By.CSS_SELECTOR, ".doc-error").text
    pages.shot("03-documents-done")

    # a failed document: its error and a retry (the same cut file fails again, and says so)
    error_row.find_element(By.CSS_SELECTOR, "button[data-action='retry']").click()
    pages.until(lambda: pages.status_of("broken.pdf") in ("waiting", "parsing", "error"))
    browser.refresh()
    pages.until(lambda: pages.status_of("broken.pdf") == "error")

    # hit testing: the expected passage first, with the score and rank of each channel
    pages.open(f"/datasets/{dataset_id}/hit-testing")
    pages.find("#query").send_keys("pan-fired Longjing tea from Hangzhou")
    pages.click("#run")
    first = pages.until(lambda: browser.find_elements(By.CSS_SELECTOR, "li.hit"))[0]
    assert PDF_PASSAGE in first.find_element(By.CSS_SELECTOR, ".content").text
    for channel in ("relevance", "semantic", "full_text"):
        row = first.find_element(By.CSS_SELECTOR, f"tr[data-channel='{channel}']")
        assert float(row.find_element(By.CSS_SELECTOR, ".score").text) > 0
    rank = first.find_element(By.CSS_SELECTOR, "tr[data-channel='full_text'] .chan-rank").text
    assert rank.endswith(" 1")
    pages.shot("04-hit-testing")

    # edit that segment, and find the edit in the next hit test
    pages.open(f"/datasets/{dataset_id}/segments?keyword=Longjing")
    segment = pages.find("article.segment")
    pages.shot("05-segments")
    segment.find_element(By.CSS_SELECTOR, "details.edit summary").click()
    content = segment.find_element(By.CSS_SELECTOR, "textarea[name='content']")
    content.clear()
    content.send_keys(EDITED)
    segment.find_element(By.CSS_SELECTOR, "button.save-segment").click()
    pages.until(lambda: EDITED in pages.find("#segments").text)
    pages.open(f"/datasets/{dataset_id}/hit-testing")
    pages.find("#query").send_keys("leaves flattened by the palm")
    pages.click("#run")
    first = pages.until(lambda: browser.find_elements(By.CSS_SELECTOR, "li.hit"))[0]
    assert EDITED in first.find_element(By.CSS_SELECTOR, ".content").text
    assert "pan-fired Longjing tea from Hangzhou" in pages.find("#history").text

    # document content is text, never markup
    pages.open(f"/datasets/{dataset_id}/segments?keyword=Chamomile")
    assert "<script>document.title='pwned'</script>" in pages.find("article.segment .content").text
    assert browser.title != "pwned"
    pages.open(f"/datasets/{dataset_id}/settings")
    pages.shot("06-settings")

    # chat: a streamed answer whose citation opens the cited segment
    pages.open("/chat")
    pages.find("#question").send_keys("How is Puer tea made?")
    pages.click("#ask")
    citation = pages.until(lambda: browser.find_elements(By.CSS_SELECTOR, "#messages .sources a"))[0]
    pages.shot("07-chat")
    citation.click()
    pages.until(lambda: browser.find_elements(By.ID, "segment"))
    assert "Puer" in pages.find("#segment").text
    pages.shot("08-cited-segment")

    # an off-topic question: "not found", with no source to click
    pages.open("/chat")
    pages.find("#question").send_keys("How many moons does Mars have?")
    pages.click("#ask")
    nothing = "The knowledge base has nothing on this question."
    answer = pages.until(
        lambda: [
            m for m in browser.find_elements(By.CSS_SELECTOR, "#messages .assistant") if nothing in m.text
        ]
    )[-1]
    assert not answer.find_elements(By.CSS_SELECTOR, ".sources a")
    pages.shot("08b-chat-not-found")

    # a POST without the CSRF token is refused
    status = browser.execute_async_script(
        "const done = arguments[0];"
        "fetch('/datasets', {method: 'POST', body: new URLSearchParams({name: 'forged'}),"
        " headers: {Accept: 'application/json'}}).then(r => done(r.status));"
    )
    assert status == 400

    # Chinese, switched on the page
    pages.click("#switch-language")
    pages.until(lambda: "知识库" in pages.find("header.top nav").text)
    pages.shot("09-datasets-zh")
    pages.click("#switch-language")  # back to English: wait for it, or the next page load races it
    pages.until(lambda: "Datasets" in pages.find("header.top nav").text)

    # a dataset-scoped key sees its dataset only
    pages.open("/datasets")
    pages.find("#dataset-name").send_keys("private")
    pages.click("#create")
    pages.until(lambda: browser.find_elements(By.ID, "upload-form"))
    private_id = browser.current_url.rsplit("/", 1)[-1]
    scoped = _scoped_key(server, dataset_id)
    pages.secrets.append(scoped)
    pages.click("#signout")
    pages.find("#secret").send_keys(scoped)
    pages.click("#signin")
    pages.until(lambda: browser.current_url.endswith("/datasets"))
    listing = pages.find("#datasets").text
    assert "茶 tea" in listing and "private" not in listing
    assert not browser.find_elements(By.ID, "create-dataset")
    pages.shot("10-scoped-datasets")
    pages.open(f"/datasets/{private_id}")
    assert "404" in pages.find("#error").text and "private" not in pages.find("main").text
    pages.shot("11-scoped-not-found")
