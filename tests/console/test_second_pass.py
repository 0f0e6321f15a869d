"""The console's API access, labels, refusals, history and long names in a real headless
Chromium against a real ``zhiku serve``: a key made, copied, used and revoked (the API refuses
it at once); a refused field shown beside itself as typed, in English and Chinese; a recent
hit test run again with its method after the server restarted; 255-character names kept inside
their tables at 1280 px.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.browser import By, LocalServer, Pages, WebDriver, chromium, zhiku_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("second-pass") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _api_status(server: LocalServer, secret: str) -> int:
    request = urllib.request.Request(server.url + "/datasets", headers={"Authorization": f"Bearer {secret}"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            json.load(response)
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code




def _all_completed(pages: Pages, count: int) -> bool:
    rows = pages.rows()
    return len(rows) >= count and {status for _, status in rows} == {"completed"}


def test_a_key_is_made_copied_used_and_revoked(server: LocalServer, browser: WebDriver) -> None:
    pages = Pages.signed_in(browser, server)
    dataset_id = pages.create_dataset("api tea")
    pages.open("/datasets")
    pages.click("#nav-api")
    pages.until(lambda: pages.find_all("#base-url"))
    assert pages.find("#base-url").text == server.url
    assert pages.find("#openapi-link").get_attribute("href") == server.url + "/openapi.json"
    pages.find("#key-name").send_keys("tea app")
    pages.find(f"#key-datasets option[value='{dataset_id}']").click()
    pages.click("#create-key")
    secret = pages.until(lambda: pages.find_all("#secret-value") and pages.find("#secret-value").text)
    pages.click("#copy-secret")
    copied = pages.until(
        lambda: (
            pages.find("#copy-secret").text == "Copied"
            or pages.driver.execute_script("return window.getSelection().toString()") == secret
        )
    )
    assert copied
    pages.shot("api-access-new-key")
    assert _api_status(server, secret) == 200

    pages.open("/api-access")
    assert secret not in pages.driver.page_source  # shown once
    row = pages.until(lambda: [r for r in pages.find_all("#keys tr.active") if "tea app" in r.text])[0]
    assert "api tea" in row.text and secret[:10] in row.text
    row.find_element(By.CSS_SELECTOR, "button.revoke").click()
    alert = pages.until(lambda: pages.driver.switch_to.alert)
    alert.dismiss()  # asked first: nothing happens without a yes
    assert _api_status(server, secret) == 200
    row.find_element(By.CSS_SELECTOR, "button.revoke").click()
    pages.until(lambda: pages.driver.switch_to.alert).accept()
    pages.until(lambda: pages.find_all("#revoked"))
    assert _api_status(server, secret) == 401  # at once

    pages.use_language("zh-CN")
    pages.open("/api-access")
    assert pages.find("h1").text == "API 访问"
    revoked = [r for r in pages.find_all("#keys tr.revoked") if "tea app" in r.text]
    assert revoked and "已撤销" in revoked[0].text
    pages.shot("api-access-zh")
    pages.use_language("en")


def test_a_refused_field_shows_its_message_beside_it_as_typed(
    server: LocalServer, browser: WebDriver
) -> None:
    pages = Pages.signed_in(browser, server)
    pages.create_dataset("taken name")
    for lang, message in (("en", "this name is taken"), ("zh-CN", "这个名称已被使用")):
        pages.open("/datasets")
        pages.use_language(lang)
        pages.find("#dataset-name").send_keys("taken name")
        pages.find("textarea[name='description']").send_keys("<script>window.bad = 1</script>")
        pages.click("#create")
        error = pages.until(lambda: pages.find_all("#error-create-name") and pages.find("#error-create-name"))
        assert error.text == message
        name = pages.find("#dataset-name")
        assert name.get_attribute("value") == "taken name" and name.get_attribute("aria-invalid") == "true"
        # beside its field: in the field's own label, right of the input
        assert error.find_element(By.XPATH, "..") == name.find_element(By.XPATH, "..")
        assert (
            pages.find("textarea[name='description']").get_attribute("value")
            == "<script>window.bad = 1</script>"
        )
        assert pages.driver.execute_script("return window.bad") is None
        pages.shot(f"refused-{lang}")
    pages.use_language("en")


def test_a_recent_query_runs_again_with_its_method_after_a_restart(
    browser: WebDriver, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    text = tmp_path / "tieguanyin.txt"
    text.write_text("Tieguanyin is an oolong tea from Anxi in Fujian.", encoding="utf-8")
    with zhiku_server(home) as first:
        pages = Pages.signed_in(browser, first)
        dataset_id = pages.create_dataset("history")
        pages.upload(text)
        pages.until(lambda: _all_completed(pages, 1))
        pages.open(f"/datasets/{dataset_id}/hit-testing")
        pages.find("#search_method option[value='full_text_search']").click()
        pages.find("#query").send_keys("oolong from Anxi")
        pages.click("#run")
        pages.until(lambda: pages.find_all("li.hit"))
    with zhiku_server(home) as second:
        pages = Pages.signed_in(browser, second)
        pages.open(f"/datasets/{dataset_id}/hit-testing")
        entry = pages.find("#history button[data-method='full_text_search']")
        assert entry.text == "oolong from Anxi"
        assert "Full-text search" in pages.find("#history").text
        entry.click()  # runs it, not only fills the box
        pages.until(lambda: pages.find_all("li.hit"))
        assert pages.find("#query").get_attribute("value") == "oolong from Anxi"
        assert pages.find("#search_method").get_attribute("value") == "full_text_search"
        assert not pages.find_all("li.hit tr[data-channel='semantic']")
        pages.shot("history-after-restart")


def test_long_names_stay_inside_their_tables_at_1280_px(
    server: LocalServer, browser: WebDriver, tmp_path: Path
) -> None:
    pages = Pages.signed_in(browser, server)
    browser.set_window_size(1280, 900)
    try:
        name = ("长名字" + "Longjing-" * 40)[:255]
        dataset_id = pages.create_dataset(name)
        document = tmp_path / (("d" * 251) + ".txt")
        document.write_text("Longjing is a pan-fired green tea.", encoding="utf-8")
        pages.upload(document)
        pages.until(lambda: _all_completed(pages, 1))
        overflow = (
            "const table = document.querySelector(arguments[0]);"
            "const card = table.closest('.card');"
            "return [table.scrollWidth <= card.clientWidth, "
            "document.documentElement.scrollWidth <= window.innerWidth]"
        )
        for path, table, cell in (
            ("/datasets", "#datasets", f"tr[data-dataset='{dataset_id}'] td.name a"),
            (f"/datasets/{dataset_id}", "#documents", "tr.doc .doc-name"),
        ):
            pages.open(path)
            assert pages.driver.execute_script(overflow, table) == [True, True], path
            shown = pages.find(cell)
            assert shown.get_attribute("title") in (name, document.name)
            pages.shot("long-names-" + table.strip("#"))
        pages.open("/api-access")
        assert pages.driver.execute_script(overflow, "#keys") == [True, True]
    finally:
        browser.set_window_size(1400, 1000)
