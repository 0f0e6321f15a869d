"""The console end to end in a real headless Chromium (Selenium) against a real ``zhiku serve``.

Sign in; create a dataset; upload a PDF, a DOCX, a broken PDF and a text file holding a
``<script>``; watch them reach ``completed`` (the broken one ``error``, then retried) without
reloading; hit-test and read each channel's score; edit a segment and find the edit; follow a
chat citation; refuse a POST without the CSRF token; a dataset-scoped key sees one dataset; no
API key in any page, URL or cookie. Screenshots of every page go to ``test-artifacts/console``.

Skipped when Chromium or its driver is missing (``scripts/ci_browser.sh`` installs them in CI).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.make_files import make_docx, make_pdf, make_truncated_pdf
from zhiku.api.local_server import LocalServer

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = (
    Path(os.environ.get("ZHIKU_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")) / "console"
)

pytestmark = pytest.mark.skipif(
    CHROMIUM is None or not CHROMEDRIVER.exists(),
    reason="needs Debian's chromium and chromium-driver (scripts/ci_browser.sh installs them)",
)
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")

from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

PDF_PASSAGE = "Longjing tea from Hangzhou is pan-fired by hand in hot iron woks."
DOCX_PASSAGE = "Puer tea from Yunnan is fermented and then aged for many years."
EDITED = "Edited: Longjing leaves are flattened against the wok by the palm."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    home = tmp_path_factory.mktemp("browser") / "home"
    env = {"ZHIKU_EMBEDDING_MODEL": "use", "ZHIKU_INDEXING_WORKERS": "1"}
    with LocalServer(home, env=env, threads=4) as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=1400,1000",
        "--lang=en-US",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


class Pages:
    """The browser on the console, checking on every page that no API key shows anywhere."""

    def __init__(self, driver: WebDriver, base: str, secrets: list[str]) -> None:
        self.driver = driver
        self.base = base
        self.secrets = secrets
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)
        self.check()

    def check(self) -> None:
        for secret in self.secrets:
            assert secret not in self.driver.page_source
            assert secret not in self.driver.current_url
            assert all(secret not in cookie["value"] for cookie in self.driver.get_cookies())

    def shot(self, name: str) -> None:
        self.check()
        self.driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))

    def find(self, css: str) -> Any:
        return self.driver.find_element(By.CSS_SELECTOR, css)

    def until(self, condition: Callable[[], Any], timeout: float = 120.0) -> Any:
        # A page part replaced while it is read (a form's answer re-rendering it) is read again.
        return WebDriverWait(
            self.driver, timeout, poll_frequency=0.2, ignored_exceptions=[StaleElementReferenceException]
        ).until(lambda _: condition())

    def click(self, css: str) -> None:
        self.find(css).click()
        self.check()

    def status_of(self, name: str) -> str | None:
        """The status the documents table shows for ``name`` (read in one go: polling replaces rows)."""
        statuses = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('tr.doc')).map("
            "row => [row.querySelector('td.name').firstChild.textContent.trim(), row.dataset.status])"
        )
        return dict(statuses).get(name)


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
    pages.find("#file-input").send_keys("\n".join(str(p) for p in (pdf, docx, broken, script)))
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
    pages.click("#switch-language")

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
