"""Automatic metadata filtering against the scripted chat server on 127.0.0.1: the model's
conditions narrow the search; bad conditions are dropped; a failing model filters nothing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.openai_server import Reply, ScriptedChatServer, last_user_text
from zhiku import KnowledgeBase
from zhiku.knowledge_base.automatic_filter import TOOL_NAME
from zhiku.knowledge_base.dataset import Dataset

POLICIES = {
    "travel-2023.md": ("2023", "Travel expenses are reimbursed within 30 days of the trip."),
    "travel-2024.md": ("2024", "Travel expenses are reimbursed within 10 days of the trip."),
    "travel-2025.md": ("2025", "Travel expenses are reimbursed within 5 days of the trip."),
}

#: These tests look at what a search may return (sections, filters, terms), not at relevance:
#: their datasets keep every hit.
KEEP_ALL = {"score_threshold": None}


def model(body: dict[str, Any]) -> Reply:
    """Answers like a model would: a year in the question becomes a condition on ``year``."""
    assert body["tools"][0]["function"]["name"] == TOOL_NAME
    fields = body["tools"][0]["function"]["parameters"]["properties"]["conditions"]["items"]
    assert "year" in fields["properties"]["name"]["enum"]
    question = last_user_text(body)
    if "2024" in question:
        return Reply.tool_call(TOOL_NAME, {"conditions": [
            {"name": "year", "comparison_operator": "=", "value": 2024},
            {"name": "colour", "comparison_operator": "is", "value": "red"},  # not a field: dropped
        ]})
    if "broken" in question:
        return Reply.status(500)
    return Reply.text("none")


@pytest.fixture
def server() -> Iterator[ScriptedChatServer]:
    with ScriptedChatServer(model) as chat_server:
        yield chat_server


@pytest.fixture
def policies(tmp_path: Path, server: ScriptedChatServer) -> Iterator[Dataset]:
    with KnowledgeBase.open(
        tmp_path / "home", embedding_model="use", llm_base_url=server.base_url, llm_model="scripted",
        llm_max_retries=0,
    ) as kb:
        ds = kb.create_dataset("policies", retrieval=KEEP_ALL)
        ds.metadata.add_field("year", "number")
        for name, (year, text) in POLICIES.items():
            ds.metadata.set_values(ds.add_text(name, text).id, {"year": year})
        yield ds


def _names(ds: Dataset, question: str, **options: Any) -> list[str]:
    return [hit.document_name for hit in ds.search(question, top_k=3, **options)]


def test_the_models_conditions_narrow_the_search(policies: Dataset) -> None:
    question = "How fast are 2024 travel expenses reimbursed?"
    assert len(_names(policies, question)) == 3
    assert _names(policies, question, metadata_filtering_mode="automatic") == ["travel-2024.md"]
    written = policies.automatic_filter(question)
    assert written.metadata_filter is not None
    assert [c.name for c in written.metadata_filter.conditions] == ["year"]
    assert any("colour" in note for note in written.notes)


def test_no_condition_or_a_failing_model_filters_nothing(policies: Dataset) -> None:
    automatic = {"metadata_filtering_mode": "automatic"}
    assert len(_names(policies, "How fast are travel expenses reimbursed?", **automatic)) == 3
    assert len(_names(policies, "broken travel question", **automatic)) == 3
    assert "failed" in policies.automatic_filter("broken travel question").notes[0]


def test_automatic_and_manual_filters_must_both_pass(policies: Dataset) -> None:
    before_2025 = {"conditions": [{"name": "year", "comparison_operator": "<", "value": 2025}]}
    question = "2024 travel expenses"
    assert _names(policies, question, filter=before_2025, metadata_filtering_mode="automatic") == [
        "travel-2024.md"
    ]
    after_2024 = {"conditions": [{"name": "year", "comparison_operator": ">", "value": 2024}]}
    assert _names(policies, question, filter=after_2024, metadata_filtering_mode="automatic") == []
