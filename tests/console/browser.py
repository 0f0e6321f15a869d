"""What the console's browser tests share: a real ``zhiku serve``, a headless Chromium driven by
Selenium, and :class:`Pages`, the browser on the console checking that no API key ever shows.

Importing it skips the importing test module when Chromium, its driver or Selenium is missing
(``scripts/ci_browser.sh`` installs them in CI).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from zhiku.api.local_server import LocalServer

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = (
    Path(os.environ.get("ZHIKU_TEST_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")) / "console"
)

if CHROMIUM is None or not CHROMEDRIVER.exists():
    pytest.skip(
        "needs Debian's chromium and chromium-driver (scripts/ci_browser.sh installs them)",
        allow_module_level=True,
    )
webdriver = pytest.importorskip("selenium.webdriver", reason="needs selenium (the dev extra)")

from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

__all__ = ["ARTIFACTS", "By", "LocalServer", "Pages", "WebDriver", "chromium", "zhiku_server"]


@contextmanager
def zhiku_server(home: Path) -> Iterator[LocalServer]:
    """``zhiku serve`` on ``home`` with the small offline embedding model and one indexing worker."""
    env = {"ZHIKU_EMBEDDING_MODEL": "use", "ZHIKU_INDEXING_WORKERS": "1"}
    with LocalServer(home, env=env, threads=4) as running:
        yield running


@contextmanager
def chromium(profile: Path, *, lang: str = "en-US") -> Iterator[WebDriver]:
    """A headless Chromium with its own profile, making no request of its own to the network."""
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
        f"--lang={lang}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


class Pages:
    """The browser on the console, checking on every page that no API key shows anywhere."""

    def __init__(self, driver: WebDriver, base: str, secrets: list[str]) -> None:
        self.driver = driver
        self.base = base
        self.secrets = secrets
        ARTIFACTS.mkdir(parents=True, exist_ok=True)

    @classmethod
    def signed_in(cls, driver: WebDriver, server: LocalServer) -> Pages:
        """The console of ``server`` in ``driver``, signed in with the server's key."""
        pages = cls(driver, server.url.removesuffix("/v1"), [server.key])
        pages.open("/signin")
        if "/signin" in driver.current_url:
            pages.find("#secret").send_keys(server.key)
            pages.click("#signin")
            pages.until(lambda: driver.current_url.endswith("/datasets"))
        return pages

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

    def find_all(self, css: str) -> list[Any]:
        return self.driver.find_elements(By.CSS_SELECTOR, css)

    def until(self, condition: Callable[[], Any], timeout: float = 120.0) -> Any:
        # A page part replaced while it is read (a form's answer re-rendering it, rows updated
        # live) is read again: Chromium says so as a stale element or as a node that no longer
        # belongs to the document, depending on when the replacement lands.
        def read(_: Any) -> Any:
            try:
                return condition()
            except WebDriverException as exc:
                if "does not belong to the document" in str(exc):
                    return False
                raise

        return WebDriverWait(
            self.driver, timeout, poll_frequency=0.2, ignored_exceptions=[StaleElementReferenceException]
        ).until(read)

    def click(self, css: str) -> None:
        self.find(css).click()
        self.check()

    def use_language(self, lang: str) -> None:
        """The console in ``lang`` (``en`` or ``zh``), switched on the datasets page and waited
        for: a page opened while the switch's own navigation is pending would be replaced by it."""
        self.open("/datasets")
        wanted = "zh-CN" if lang.startswith("zh") else "en"
        if self.driver.execute_script("return document.documentElement.lang") != wanted:
            self.click("#switch-language")
            self.until(lambda: self.driver.execute_script("return document.documentElement.lang") == wanted)

    def submit(self, css: str) -> None:
        """Click a button that sends its form the classic way, and wait for the page it loads: a
        page opened before that load ends is replaced by it."""
        page = self.driver.find_element(By.TAG_NAME, "html")
        self.find(css).click()
        self.until(lambda: _gone(page))
        self.check()

    def create_dataset(self, name: str) -> str:
        """A new dataset made with the form on the datasets page; its id (the page is its documents)."""
        self.open("/datasets")
        self.find("#dataset-name").send_keys(name)
        self.click("#create")
        self.until(lambda: self.find_all("#upload-form"))
        return str(self.driver.current_url.rsplit("/", 1)[-1])

    def upload(self, *paths: Path) -> None:
        """Choose ``paths`` in the documents page's file input and press Upload."""
        self.find("#file-input").send_keys("\n".join(str(path) for path in paths))
        self.click("#upload")

    def rows(self) -> list[tuple[str, str]]:
        """Each document's name and status as the documents table shows them, top to bottom
        (read in one go: rows update)."""
        rows = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('tr.doc')).map("
            "row => [row.querySelector('td.name .doc-name').textContent.trim(), row.dataset.status])"
        )
        return [(name, status) for name, status in rows]

    def statuses(self) -> dict[str, str]:
        """Each document's status by name."""
        return dict(self.rows())

    def status_of(self, name: str) -> str | None:
        return self.statuses().get(name)

    def document_count(self) -> int:
        return int(self.driver.execute_script("return document.querySelectorAll('tr.doc').length"))


def _gone(element: Any) -> bool:
    """Whether ``element`` left the page (its document was replaced)."""
    try:
        element.tag_name  # noqa: B018 - any read tells
    except StaleElementReferenceException:
        return True
    return False
