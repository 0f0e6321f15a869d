"""``zhiku dataset create --summary llm --search-in originals+summaries``, against a scripted chat
model: the search finds a segment through a word only its summary holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import Run
from tests.fixtures.openai_server import Reply, ScriptedChatServer


def test_a_dataset_created_with_summaries_is_searched_through_them(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedChatServer(lambda body: Reply.text("The garden's daily timetable.")) as server:
        monkeypatch.setenv("ZHIKU_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("ZHIKU_LLM_MODEL", "m")
        run("dataset", "create", "tea", "--summary", "llm", "--search-in", "originals+summaries")
        source = tmp_path / "hours.txt"
        source.write_text("The tea garden opens at eight in the morning.", encoding="utf-8")
        assert "1 indexed, 0 failed" in run("ingest", str(source), "--dataset", "tea").output
        assert len(server.requests) == 1
        output = run("search", "timetable", "--dataset", "tea", "--method", "keyword").output
        assert "opens at eight" in output
