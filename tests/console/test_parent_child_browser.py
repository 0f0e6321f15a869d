"""Parent-child in a real headless Chromium against a real ``zhiku serve``, in English and in
Chinese: the index method chosen at creation, the parent-child settings shown only for that
index mode, saved and used by the next indexing, and the matched child chunks under each hit;
axe finds nothing serious or critical on these pages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.console.browser import LocalServer, Pages, WebDriver, chromium, zhiku_server
from tests.console.test_accessibility import _problems

TEXT = "\n\n".join(
    f"Garden {n} grows tea on the hill | Pickers come at dawn in spring | The leaves dry by noon. |"
    for n in range(3)
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with zhiku_server(tmp_path_factory.mktemp("parent-child") / "home") as running:
        yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver




@pytest.mark.parametrize(
    ("lang", "parent", "matched"),
    [("en", "Parent chunk", "Matched child chunks"), ("zh", "父块", "命中的子块")],
)
def test_parent_child_is_chosen_set_and_its_matched_children_shown(
    server: LocalServer, browser: WebDriver, tmp_path: Path, lang: str, parent: str, matched: str
) -> None:
    pages = Pages.signed_in(browser, server)
    pages.use_language(lang)
    problems: dict[str, list[str]] = {}
    try:
        pages.find("#dataset-name").send_keys(f"parents {lang}")
        pages.find("#index-method option[value='hierarchical_model']").click()
        if found := _problems(pages):
            problems["create form"] = found
        pages.click("#create")
        pages.until(lambda: pages.find_all("#upload-form"))
        dataset_id = pages.driver.current_url.rsplit("/", 1)[-1]

        pages.open(f"/datasets/{dataset_id}/settings")
        fieldset = pages.find("#parent-child")
        assert fieldset.is_displayed() and parent in fieldset.text
        if found := _problems(pages):
            problems["settings"] = found
        pages.find("select[name='doc_form'] option[value='paragraph']").click()
        pages.until(lambda: not pages.find("#parent-child").is_displayed())  # only for parent-child
        pages.find("select[name='doc_form'] option[value='hierarchical_model']").click()
        pages.until(lambda: pages.find("#parent-child").is_displayed())
        pages.find("input[name='parent_mode'][value='full-doc']").click()
        pages.find("#child_separator").send_keys("|")
        pages.click("#save")
        pages.until(lambda: pages.find_all("#saved"))
        assert pages.find("input[name='parent_mode'][value='full-doc']").is_selected()
        assert pages.find("#child_separator").get_attribute("value") == "|"

        (tmp_path / "garden.txt").write_text(TEXT, encoding="utf-8")
        pages.open(f"/datasets/{dataset_id}")
        pages.upload(tmp_path / "garden.txt")
        pages.until(lambda: pages.statuses() == {"garden.txt": "completed"})
        pages.open(f"/datasets/{dataset_id}/hit-testing")
        pages.find("#query").send_keys("pickers at dawn in spring")
        pages.click("#run")
        pages.until(lambda: pages.find_all("li.hit .child-hit"))
        children = pages.find_all("li.hit .child-hit .child-content")
        assert matched in pages.find("li.hit .children").text
        assert children[0].text == "Pickers come at dawn in spring"  # the best child first
        pages.shot(f"parent-child-hits-{lang}")
        if found := _problems(pages):
            problems["hit testing"] = found
    finally:
        pages.use_language("en")
    assert not problems, "\n".join(f"{page}:\n  " + "\n  ".join(found) for page, found in problems.items())
