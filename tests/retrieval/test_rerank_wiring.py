"""A rerank model named in settings reaches dataset search and the multi-path merge (real HTTP)."""

from __future__ import annotations

from pathlib import Path

from tests.fixtures.rerank_server import serve_rerank
from zhiku import KnowledgeBase


def test_reranking_model_mode_and_merge_use_the_configured_http_model(tmp_path: Path) -> None:
    with serve_rerank() as server, KnowledgeBase.open(
        tmp_path,
        embedding_model="use",
        rerank_model="http:test-rerank",
        rerank_base_url=server.url + "/v1",
        rerank_style="cohere",
    ) as kb:
        tea = kb.create_dataset("tea")
        tea.add_text("a.txt", "green tea is brewed at eighty degrees")
        tea.add_text("b.txt", "black tea is brewed with boiling water")
        other = kb.create_dataset("other")
        other.add_text("c.txt", "planets orbit the sun")

        hits = tea.search("black tea boiling water", reranking={"mode": "reranking_model"})
        assert hits[0].content.startswith("black tea")
        assert 0.9 < hits[0].score < 1.0  # the fake API's relevance score, not a fusion score

        merged = kb.retrieve("planets orbit the sun", merge="reranking_model", top_k=2)
        assert merged.hits[0].content == "planets orbit the sun"
        assert merged.hits[0].dataset_id == other.id
    bodies = server.script.requests
    assert bodies and all(request["body"]["model"] == "test-rerank" for request in bodies)
