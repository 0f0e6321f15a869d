"""Rerank providers: a tiny random cross-encoder saved to a temp dir, and a real HTTP rerank server.

The cross-encoder tests check the code path (order, batching, truncation, score scale), not
quality; the HTTP tests run each wire format against ``tests.fixtures.rerank_server``.
"""

from __future__ import annotations

import math
import re
import socket
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.rerank_server import (
    COHERE_PATH,
    DASHSCOPE_PATH,
    TEI_PATH,
    RerankServer,
    fake_score,
    serve_rerank,
)
from tests.fixtures.tiny_bert import save_tiny_bert
from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.core.retrieval_config import Channel, RetrievalConfig
from zhiku.core.scope import DocumentScope
from zhiku.fusion.fusion import rerank_with_model
from zhiku.fusion.types import FusedHit
from zhiku.providers.rerank import open_rerank_model
from zhiku.providers.rerank.http import HttpRerank
from zhiku.retrieval.dataset_search import DatasetSearch

API_KEY = "sk-rerank-5c1d0e"
WORDS = "the a cat dog sat on mat ran fast slow blue sky grey red apples hello world 知 识 库 检 索".split()
QUERY = "the cat sat"
TEXTS = [
    "the cat sat on the mat",
    "dog",
    "hello world the dog ran fast and the cat ran slow on a mat",
    "知识库检索",
    "a cat",
]

# --- cross-encoder ------------------------------------------------------------------------------


def save_cross_encoder(path: Path, num_labels: int, *, head: bool = True) -> Path:
    """A 2-layer random BERT classifier (or, ``head=False``, a bare encoder) saved in ``path``."""
    return save_tiny_bert(path, WORDS, layers=2, num_labels=num_labels if head else None, seed=num_labels)


@pytest.fixture(scope="module")
def one_logit(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_cross_encoder(tmp_path_factory.mktemp("ce-1"), 1)


@pytest.fixture(scope="module")
def two_logits(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_cross_encoder(tmp_path_factory.mktemp("ce-2"), 2)


def direct_logits(path: Path, query: str, texts: Sequence[str]) -> list[list[float]]:
    """The model's logits straight from transformers, one pair at a time, for comparison."""
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True)
    with torch.inference_mode():
        return [model(**tokenizer(query, text, return_tensors="pt")).logits[0].tolist() for text in texts]


def test_one_logit_scores_in_input_order_with_both_activations(one_logit: Path) -> None:
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    model = open_rerank_model(f"cross-encoder:{one_logit}")
    raw = CrossEncoderRerank(one_logit, activation="none")
    scores = model.rerank(QUERY, TEXTS)
    logits = [row[0] for row in direct_logits(one_logit, QUERY, TEXTS)]

    assert model.name == f"cross-encoder:{one_logit}"
    assert raw.name == f"cross-encoder/{one_logit.name}"
    assert len(scores) == len(TEXTS) and all(0.0 < s < 1.0 for s in scores)
    assert raw.rerank(QUERY, TEXTS) == pytest.approx(logits, abs=1e-5)
    assert scores == pytest.approx([1 / (1 + math.exp(-x)) for x in logits], abs=1e-6)
    assert model.rerank(QUERY, TEXTS[::-1]) == pytest.approx(scores[::-1], abs=1e-6)
    assert model.rerank(QUERY, []) == []


def test_two_logits_give_the_softmax_probability_of_label_1(two_logits: Path) -> None:
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    logits = direct_logits(two_logits, QUERY, TEXTS)
    softmax = [math.exp(b) / (math.exp(a) + math.exp(b)) for a, b in logits]
    assert CrossEncoderRerank(two_logits).rerank(QUERY, TEXTS) == pytest.approx(softmax, abs=1e-6)
    log_odds = CrossEncoderRerank(two_logits, activation="none").rerank(QUERY, TEXTS)
    assert log_odds == pytest.approx([b - a for a, b in logits], abs=1e-5)


def test_batches_do_not_change_scores(one_logit: Path) -> None:
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    texts = TEXTS * 3
    single = CrossEncoderRerank(one_logit, batch_size=100).rerank(QUERY, texts)
    batched = CrossEncoderRerank(one_logit, batch_size=2).rerank(QUERY, texts)
    assert batched == pytest.approx(single, abs=1e-5)


def test_long_texts_and_long_queries_are_cut_to_max_length(one_logit: Path) -> None:
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    model = CrossEncoderRerank(one_logit, max_length=32)
    long_text = "the dog ran fast " * 500  # far past the 64 positions the model has
    scores = model.rerank(QUERY, [long_text, "a cat"])
    # Only the text is cut, to 32 - 3 query tokens - [CLS] [SEP] [SEP]: the score of its first 26 words.
    head = model.rerank(QUERY, [" ".join(long_text.split()[:26])])[0]
    assert scores[0] == pytest.approx(head, abs=1e-5)
    long_query = "the cat sat " * 100  # too long to keep whole: both sides are cut
    assert len(model.rerank(long_query, [long_text, "a cat"])) == 2


def test_concurrent_calls_give_the_same_scores(one_logit: Path) -> None:
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    model = CrossEncoderRerank(one_logit, batch_size=2)
    expected = model.rerank(QUERY, TEXTS)
    results: list[list[float]] = []

    def work() -> None:
        results.append(model.rerank(QUERY, TEXTS))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(r == pytest.approx(expected, abs=1e-6) for r in results)


def test_not_a_cross_encoder_is_refused_with_the_path_and_reason(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    with pytest.raises(ModelUnavailable, match=f"not found: {re.escape(str(tmp_path / 'nope'))}"):
        CrossEncoderRerank(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelUnavailable, match="no config.json"):
        CrossEncoderRerank(tmp_path / "empty")
    with pytest.raises(ModelUnavailable, match="not a cross-encoder: its weights lack classifier"):
        CrossEncoderRerank(save_cross_encoder(tmp_path / "bare", 1, head=False))
    with pytest.raises(ModelUnavailable, match="3-label classifier"):
        CrossEncoderRerank(save_cross_encoder(tmp_path / "three", 3))


def test_without_torch_the_error_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from zhiku.providers.rerank.cross_encoder import CrossEncoderRerank

    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"")
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name: None if name == "torch" else find_spec(name)
    )
    with pytest.raises(ModelUnavailable, match=r"'torch'; pip install 'zhiku\[torch\]'"):
        CrossEncoderRerank(tmp_path)


def test_fusion_scores_the_union_with_the_cross_encoder(one_logit: Path) -> None:
    model = open_rerank_model(f"cross-encoder:{one_logit}", {"batch_size": 2})
    candidates = {"semantic": [("a", 0.9), ("b", 0.8)], "full_text": [("c", 5.0), ("a", 2.0)]}
    texts = {"a": TEXTS[0], "b": TEXTS[1], "c": TEXTS[2]}
    hits = rerank_with_model(QUERY, candidates, texts, model)
    expected = dict(zip("abc", model.rerank(QUERY, TEXTS[:3]), strict=True))
    assert [h.segment_id for h in hits] == sorted(expected, key=expected.__getitem__, reverse=True)
    assert {h.segment_id: h.score for h in hits} == pytest.approx(expected, abs=1e-6)
    assert next(h for h in hits if h.segment_id == "a").ranks == {"semantic": 1, "full_text": 2}


# --- HTTP ---------------------------------------------------------------------------------------

BASE_PATHS = {"cohere": "/v1", "jina": "/v1", "tei": "/tei", "dashscope": "/api/v1"}
URL_PATHS = {"cohere": COHERE_PATH, "jina": COHERE_PATH, "tei": TEI_PATH, "dashscope": DASHSCOPE_PATH}


@pytest.fixture
def server() -> Iterator[RerankServer]:
    with serve_rerank() as running:
        yield running


def http_model(server: RerankServer, style: str = "cohere", **options: Any) -> HttpRerank:
    settings: dict[str, Any] = {"style": style, "retry_backoff": 0.01, "timeout": 5, **options}
    return HttpRerank(server.url + BASE_PATHS[style], "fake-rerank", **settings)


@pytest.mark.parametrize("style", ["cohere", "jina", "tei", "dashscope"])
def test_each_style_returns_scores_in_input_order(server: RerankServer, style: str) -> None:
    model = http_model(server, style, api_key=API_KEY)
    assert model.rerank(QUERY, TEXTS) == pytest.approx([fake_score(QUERY, t) for t in TEXTS])
    (request,) = server.script.requests
    assert request["path"] == URL_PATHS[style]
    assert request["auth"] == f"Bearer {API_KEY}"
    body = request["body"]
    if style == "tei":
        assert body == {"query": QUERY, "texts": TEXTS, "truncate": True}
    elif style == "dashscope":
        assert body == {
            "model": "fake-rerank",
            "input": {"query": QUERY, "documents": TEXTS},
            "parameters": {"return_documents": False, "top_n": 5},
        }
    else:
        assert body["model"] == "fake-rerank" and body["documents"] == TEXTS and body["top_n"] == 5
        assert body.get("return_documents", None) == (False if style == "jina" else None)
    assert model.rerank(QUERY, []) == [] and len(server.script.requests) == 1


def test_batches_put_each_score_back_in_place(server: RerankServer) -> None:
    texts = [f"{w} cat" for w in WORDS[:7]]
    scores = http_model(server, "tei", batch_size=3).rerank(QUERY, texts)
    assert scores == pytest.approx([fake_score(QUERY, t) for t in texts])
    assert [len(r["body"]["texts"]) for r in server.script.requests] == [3, 3, 1]


def test_a_server_error_is_retried(server: RerankServer) -> None:
    server.script.replies = [(500, '{"error": "overloaded"}'), (429, '{"error": "slow down"}')]
    assert http_model(server, "dashscope").rerank(QUERY, TEXTS[:2]) == pytest.approx(
        [fake_score(QUERY, t) for t in TEXTS[:2]]
    )
    assert len(server.script.requests) == 3


def test_retries_run_out(server: RerankServer) -> None:
    server.script.replies = [(503, "busy")] * 3
    with pytest.raises(ModelUnavailable, match=r"answered 503: busy \(after 2 tries\)"):
        http_model(server, max_retries=1).rerank(QUERY, TEXTS)
    assert len(server.script.requests) == 2


def test_a_refused_key_fails_at_once_and_is_never_shown(server: RerankServer) -> None:
    server.script.api_key = "sk-the-right-one"
    model = http_model(server, "jina", api_key=API_KEY)
    with pytest.raises(ModelUnavailable, match="answered 401") as raised:
        model.rerank(QUERY, TEXTS)
    assert len(server.script.requests) == 1  # not retried
    assert API_KEY in server.script.requests[0]["auth"]  # the server echoed it in its body...
    for shown in (str(raised.value), repr(model), model.name):
        assert API_KEY not in shown  # ...but it appears nowhere we print
    assert "***" in str(raised.value)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ("<html>gateway</html>", "unexpected answer"),
        ('{"results": "none"}', "unexpected answer"),
        ('{"results": [{"index": 0}]}', "unexpected answer .*relevance_score"),
        ('{"results": [{"index": 9, "relevance_score": 0.5}]}', "index 9 is not one of the 5"),
        ('{"results": [{"index": 0, "relevance_score": "high"}]}', "not a finite number"),
        (
            '{"results": [{"index": 0, "relevance_score": 0.1}, {"index": 0, "relevance_score": 0.2}]}',
            "twice",
        ),
    ],
)
def test_a_malformed_answer_is_model_unavailable(server: RerankServer, reply: str, message: str) -> None:
    server.script.replies = [(200, reply)]
    with pytest.raises(ModelUnavailable, match=message):
        http_model(server).rerank(QUERY, TEXTS)


@pytest.mark.parametrize("style", ["cohere", "tei", "dashscope"])
def test_a_missing_index_is_never_a_silent_zero(server: RerankServer, style: str) -> None:
    server.script.drop_index = 3
    with pytest.raises(ModelUnavailable, match="scored 4 of 5 texts \\(missing index 3\\)"):
        http_model(server, style).rerank(QUERY, TEXTS)


def test_an_unreachable_endpoint_is_model_unavailable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = HttpRerank(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, retry_backoff=0.01, timeout=2)
    with pytest.raises(ModelUnavailable, match=r"unreachable.*after 2 tries"):
        model.rerank(QUERY, TEXTS)


class Fixed:
    """A search channel with a fixed answer."""

    def __init__(self, hits: list[tuple[str, float]]) -> None:
        self.hits = hits

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        return self.hits[:limit]

    def holds_gil(self, query: str) -> bool:
        return True


class Texts:
    """A segment catalog where every segment is served, with these texts."""

    has_children = False

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    def parents_of(self, ids: Sequence[str]) -> dict[str, str]:
        return {}

    def live_ids(self, ids: Sequence[str]) -> set[str]:
        return set(ids)

    def live_texts(self, ids: Sequence[str]) -> dict[str, str]:
        return {i: self.texts[i] for i in ids}

    def hits(self, fused: Sequence[FusedHit]) -> list[Hit]:
        return [Hit(hit.segment_id, hit.score, content=self.texts[hit.segment_id]) for hit in fused]


def test_retrieval_service_reranks_with_an_http_model(server: RerankServer) -> None:
    spec = "http:fake-rerank"
    model = open_rerank_model(spec, {"base_url": server.url + "/tei", "style": "tei", "api_key": API_KEY})
    texts = {"a": "apples are red", "b": "the cat sat on the mat", "c": "a cat", "d": "blue sky"}
    channels: dict[Channel, Fixed] = {
        "semantic": Fixed([("a", 0.9), ("c", 0.8)]),
        "full_text": Fixed([("d", 3.0), ("b", 1.0)]),
    }
    reranking = {"mode": "reranking_model", "model": spec}
    config = RetrievalConfig(top_k=3, reranking=reranking, score_threshold=None)

    with DatasetSearch(channels, catalog=Texts(texts), rerank_model=model) as service:
        hits = service.fused(QUERY, config)
        assert len(server.script.requests) == 1 and len(server.script.requests[0]["body"]["texts"]) == 4
        strict = service.fused(QUERY, config.merged({"score_threshold": hits[1].score}))
    assert [h.segment_id for h in hits] == ["b", "c", "d"]
    assert [h.segment_id for h in strict] == ["b", "c"]  # the model's score is the relevance cut
    assert hits[0].score == pytest.approx(fake_score(QUERY, texts["b"]))
    assert hits[0].scores == {"full_text": 1.0} and hits[0].ranks == {"full_text": 2}


# --- specs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("bge-reranker:/models/x", None, "unknown rerank 'bge-reranker'; installed: cross-encoder, http"),
        (":x", None, "empty rerank model kind"),
        ("http:", {"base_url": "http://127.0.0.1:1"}, "needs a model name"),
        ("http:m", None, "needs the option base_url"),
        (
            "http:m",
            {"base_url": "http://127.0.0.1:1", "style": "openai"},
            "unknown rerank API style 'openai'",
        ),
        ("cross-encoder:", None, "needs a model directory"),
    ],
)
def test_bad_specs_are_config_errors(spec: str, options: dict[str, Any] | None, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        open_rerank_model(spec, options)


def test_http_spec_options_and_name(server: RerankServer) -> None:
    model = open_rerank_model(
        "http:rerank-v3.5", {"base_url": server.url + "/v1/", "api_key": API_KEY, "timeout": 3}
    )
    assert isinstance(model, HttpRerank)
    assert model.url == server.url + COHERE_PATH and model.model == "rerank-v3.5"
    assert model.name == "http:rerank-v3.5"
    port = server.server_address[1]
    assert HttpRerank(server.url, "m", style="tei").name == f"tei/127.0.0.1:{port}/m"
