"""Agent mode in the console's chat, in Chromium, against a scripted chat model over HTTP: each
search the model makes is shown as it happens, then the cited answer."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.console.browser import LocalServer, Pages, WebDriver, chromium
from tests.fixtures.openai_server import Reply, ScriptedChatServer

QUERY = "Longjing water temperature"


def _model(body: dict[str, Any]) -> Reply:
    """The chat model of agent mode: one search, then an answer citing what it read."""
    if any(message["role"] == "tool" for message in body["messages"]):
        return Reply.text("Brew Longjing with water at 80°C [1].")
    return Reply.tool_call("kb_search", {"query": QUERY}, content="Look up the brewing guide.")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with ScriptedChatServer(_model) as model:
        env = {
            "ZHIKU_EMBEDDING_MODEL": "use",
            "ZHIKU_INDEXING_WORKERS": "1",
            "ZHIKU_LLM_BASE_URL": model.base_url,
            "ZHIKU_LLM_MODEL": "scripted",
        }
        with LocalServer(tmp_path_factory.mktemp("agent-home"), env=env, threads=4) as running:
            yield running


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium(tmp_path_factory.mktemp("agent-profile")) as driver:
        yield driver


def test_agent_mode_shows_each_search_then_the_cited_answer(
    server: LocalServer, browser: WebDriver, tmp_path: Path
) -> None:
    pages = Pages.signed_in(browser, server)
    pages.create_dataset("brewing")
    guide = tmp_path / "guide.txt"
    guide.write_text("Longjing green tea is brewed with water at 80°C for two minutes.", encoding="utf-8")
    pages.upload(guide)
    pages.until(lambda: pages.statuses() and set(pages.statuses().values()) == {"completed"})

    pages.open("/chat")
    assert pages.find("#agent-mode").is_enabled()
    pages.click("#agent-mode")
    pages.find("#question").send_keys("How hot should the water be for Longjing?")
    pages.click("#ask")
    step = pages.until(lambda: pages.find_all("#messages .assistant .steps li"))[0]
    assert QUERY in step.text and "[1]" in step.text
    citation = pages.until(lambda: pages.find_all("#messages .assistant .text a.citation"))[0]
    assert citation.text == "[1]" and "80°C" in pages.find("#messages .assistant .text").text
    sources = pages.find_all("#messages .assistant .sources a")
    assert [source.text for source in sources] == ["guide.txt"]


def test_without_a_chat_model_agent_mode_is_offered_disabled_and_says_why(console: Any) -> None:
    page = console.get("/chat").get_data(as_text=True)
    assert 'id="agent-mode" disabled aria-describedby="agent-help"' in page
    assert "Agent mode needs a chat model" in page
