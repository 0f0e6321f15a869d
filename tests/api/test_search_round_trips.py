"""A single-dataset search reads the database twice: the dataset's settings, then the hits'
records (whose read is also their live check). Nothing reads a hit's segment again, through
the library or through the API's retrieve endpoint."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import Engine, event

from tests.api.conftest import Api, context_of
from zhiku.core import registry

TEXT = (
    "Green tea is brewed at eighty degrees for two minutes.\n\n"
    "Black tea takes boiling water and steeps for four minutes.\n\n"
    "Oolong sits between green and black tea."
)
METHODS = ("hybrid_search", "semantic_search", "full_text_search")


@contextmanager
def statements(engine: Engine) -> Iterator[list[str]]:
    """The SQL statements this thread sends to ``engine`` inside the block, in order (the app's
    background threads — indexing workers, the optimizer's poll — query the same engine when
    they will, and are not the search's)."""
    sent: list[str] = []
    caller = threading.get_ident()

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if threading.get_ident() == caller:
            sent.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", record)


@pytest.fixture
def tea(api: Api) -> tuple[str, str]:
    dataset = api.create_dataset("tea")
    document = api.indexed_text(dataset, "tea.txt", TEXT)
    return dataset, document


@pytest.mark.parametrize("method", METHODS)
def test_a_library_search_makes_two_round_trips(app: Flask, tea: tuple[str, str], method: str) -> None:
    kb = context_of(app).kb
    dataset = kb.dataset(tea[0])
    assert dataset.search("green tea", search_method=method)  # opens the stores, embeds the query
    with statements(kb.sessions.kw["bind"]) as sent:
        hits = dataset.search("green tea", search_method=method)
    assert hits and hits[0].content.startswith("Green tea")
    assert len(sent) == 2, sent
    assert "FROM datasets" in sent[0] and "FROM segments" in sent[1]


@pytest.mark.parametrize("path", ["retrieve", "hit-testing"])
def test_the_retrieve_endpoint_makes_two_round_trips(
    app: Flask, api: Api, tea: tuple[str, str], path: str
) -> None:
    dataset, document = tea
    url = f"/v1/datasets/{dataset}/{path}"
    assert api.post(url, json={"query": "green tea"}).status_code == 200  # warm: stores, key, query
    with statements(context_of(app).kb.sessions.kw["bind"]) as sent:
        response = api.post(url, json={"query": "green tea", "retrieval_model": {"top_k": 3}})
    assert response.status_code == 200, response.json
    # the key check is cached for a second only, so a slow run may read the key again: it is
    # the request's, not the search's
    searched = [statement for statement in sent if "FROM api_keys" not in statement]
    assert len(searched) == 2, searched
    assert "FROM datasets" in searched[0] and "FROM segments" in searched[1]
    records = response.json["records"]
    assert records and records[0]["segment"]["content"].startswith("Green tea")
    assert records[0]["dataset"] == {"id": dataset, "name": "tea"}


def test_a_hit_s_record_is_the_segment_as_stored(app: Flask, api: Api, tea: tuple[str, str]) -> None:
    """What the search read with a hit is what the segment's own endpoint shows."""
    dataset, document = tea
    ctx = context_of(app)
    response = api.post(f"/v1/datasets/{dataset}/retrieve", json={"query": "black tea boiling"})
    ctx.hits.flush()
    listed = api.get(f"/v1/datasets/{dataset}/documents/{document}/segments").json["data"]
    stored = {segment["id"]: segment for segment in listed}
    fields = ("tokens", "keywords", "index_node_hash", "created_at", "position", "content", "enabled")
    for record in response.json["records"]:
        segment = record["segment"]
        assert {f: segment[f] for f in fields} == {f: stored[segment["id"]][f] for f in fields}
        assert segment["hit_count"] == stored[segment["id"]]["hit_count"] == 1
        assert segment["document"]["name"] == "tea.txt"


@pytest.mark.parametrize("retrieval_model", [{"top_k": 3}, {"top_k": 3, "score_threshold_enabled": False}])
def test_a_retrieve_call_reads_no_plugin_list(
    api: Api, tea: tuple[str, str], monkeypatch: pytest.MonkeyPatch, retrieval_model: dict[str, Any]
) -> None:
    """Its fusion mode is a built-in one: checking it (the body's, then the search's) reads no
    installed entry points, whose freshness check stats every ``sys.path`` directory."""
    url = f"/v1/datasets/{tea[0]}/retrieve"
    assert api.post(url, json={"query": "green tea"}).status_code == 200
    stats: list[str] = []
    monkeypatch.setattr(registry, "_mtime_ns", lambda path: stats.append(path) or 0)
    response = api.post(url, json={"query": "oolong", "retrieval_model": retrieval_model})
    assert response.status_code == 200, response.json
    assert stats == []
