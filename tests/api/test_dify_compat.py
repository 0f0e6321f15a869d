"""The request and response shapes of create-by-text, indexing-status and retrieve match Dify's
documented ones field for field; zhiku's additions are listed here by name."""

from __future__ import annotations

from tests.api.conftest import Api

# Dify's documented request bodies (its knowledge API reference), sent as they are.
CREATE_BY_TEXT_REQUEST = {
    "name": "text",
    "text": "Longjing is a green tea from Hangzhou.",
    "indexing_technique": "high_quality",
    "process_rule": {"mode": "automatic"},
}
RETRIEVE_REQUEST = {
    "query": "green tea",
    "retrieval_model": {
        "search_method": "keyword_search",
        "reranking_enable": False,
        "reranking_mode": None,
        "reranking_model": {"reranking_provider_name": "", "reranking_model_name": ""},
        "weights": None,
        "top_k": 2,
        "score_threshold_enabled": False,
        "score_threshold": None,
    },
}

# Dify's documented response keys.
DIFY_DOCUMENT = {
    "id", "position", "data_source_type", "data_source_info", "dataset_process_rule_id", "name",
    "created_from", "created_by", "created_at", "tokens", "indexing_status", "error", "enabled",
    "disabled_at", "disabled_by", "archived", "display_status", "word_count", "hit_count", "doc_form",
}  # fmt: skip
DIFY_INDEXING_STATUS = {
    "id", "indexing_status", "processing_started_at", "parsing_completed_at", "cleaning_completed_at",
    "splitting_completed_at", "completed_at", "paused_at", "error", "stopped_at", "completed_segments",
    "total_segments",
}  # fmt: skip
DIFY_SEGMENT = {
    "id", "position", "document_id", "content", "answer", "word_count", "tokens", "keywords",
    "index_node_id", "index_node_hash", "hit_count", "enabled", "disabled_at", "disabled_by", "status",
    "created_by", "created_at", "indexing_at", "completed_at", "error", "stopped_at",
}  # fmt: skip
DIFY_RECORD = {"segment", "child_chunks", "score", "tsne_position"}
DIFY_RECORD_DOCUMENT = {"id", "data_source_type", "name"}

# What zhiku adds, on purpose.
ZHIKU_DOCUMENT = {"segment_count", "content_hash"}
ZHIKU_SEGMENT = {"metadata"}
ZHIKU_RECORD = {"scores", "ranks", "dataset", "summary", "fusion_score", "evidence"}


def test_create_by_text_shape(api: Api) -> None:
    dataset = api.create_dataset()
    body = api.post(f"/v1/datasets/{dataset}/document/create-by-text", json=CREATE_BY_TEXT_REQUEST).json
    assert set(body) == {"document", "batch"}
    assert set(body["document"]) == DIFY_DOCUMENT | ZHIKU_DOCUMENT
    document = body["document"]
    assert (document["indexing_status"], document["display_status"]) == ("waiting", "queuing")
    assert (document["created_from"], document["doc_form"], document["archived"]) == (
        "api",
        "text_model",
        False,
    )
    assert isinstance(document["created_at"], int) and isinstance(body["batch"], str)


def test_indexing_status_shape(api: Api) -> None:
    dataset = api.create_dataset()
    _, batch = api.add_text(dataset, "text", "Longjing is a green tea from Hangzhou.")
    (status,) = api.wait(dataset, batch)
    assert set(status) == DIFY_INDEXING_STATUS
    assert status["indexing_status"] == "completed"
    for key in ("processing_started_at", "parsing_completed_at", "splitting_completed_at", "completed_at"):
        assert isinstance(status[key], float)
    assert (status["paused_at"], status["stopped_at"], status["error"]) == (None, None, None)


def test_retrieve_shape(api: Api) -> None:
    dataset = api.create_dataset()
    api.indexed_text(dataset, "readme.txt", "Longjing is a green tea from Hangzhou.")
    body = api.post(f"/v1/datasets/{dataset}/retrieve", json=RETRIEVE_REQUEST).json
    assert set(body) == {"query", "records"} and body["query"] == {"content": "green tea"}
    (record,) = body["records"]
    assert set(record) == DIFY_RECORD | ZHIKU_RECORD
    assert set(record["segment"]) == DIFY_SEGMENT | ZHIKU_SEGMENT | {"document"}
    assert set(record["segment"]["document"]) == DIFY_RECORD_DOCUMENT
    assert isinstance(record["score"], float) and record["tsne_position"] is None
    assert 0.0 <= record["score"] <= 1.0 and set(record["evidence"]) == {"lexical"}  # keyword search
    assert record["segment"]["status"] == "completed" and record["segment"]["position"] == 1
