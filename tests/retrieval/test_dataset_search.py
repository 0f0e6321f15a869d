from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest

from zhiku.api.dify_retrieval import parse_retrieval
from zhiku.core.documents import Hit
from zhiku.core.errors import ConfigError, ModelUnavailable, StoreError
from zhiku.core.retrieval_config import Channel, RetrievalConfig
from zhiku.core.scope import DocumentScope
from zhiku.fusion.types import FusedHit
from zhiku.retrieval.dataset_search import ChannelError, DatasetSearch


class FakeChannel:
    """A channel with a fixed answer; records how it was called and from which thread. Channels
    given one ``meet`` barrier each wait there for the others (up to 5 s, then the search fails):
    they pass only when they run at the same time, however busy the machine."""

    def __init__(
        self,
        hits: list[tuple[str, float]],
        *,
        delay: float = 0.0,
        error: Exception | None = None,
        holds_gil: bool = False,
        meet: threading.Barrier | None = None,
    ) -> None:
        self.hits = hits
        self.meet = meet
        self.delay = delay
        self.error = error
        self.gil = holds_gil
        self.calls: list[tuple[str, int]] = []
        self.threads: list[str] = []

    def search(
        self, query: str, limit: int, scope: DocumentScope | None = None, *, summaries: bool = False
    ) -> list[tuple[str, float]]:
        self.calls.append((query, limit))
        self.threads.append(threading.current_thread().name)
        if self.meet is not None:
            self.meet.wait(5.0)
        time.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self.hits[:limit]

    def holds_gil(self, query: str) -> bool:
        return self.gil


class Catalog:
    """Stands in for the segment table (only enabled, fully indexed segments have a row, here
    with a text); records each read as ``(what, ids)``."""

    has_children = False

    def __init__(self, texts: Mapping[str, str]) -> None:
        self.texts = dict(texts)
        self.calls: list[tuple[str, list[str]]] = []

    def parents_of(self, ids: Sequence[str]) -> dict[str, str]:
        return {}

    def live_ids(self, ids: Sequence[str]) -> set[str]:
        self.calls.append(("ids", list(ids)))
        return {i for i in ids if i in self.texts}

    def live_texts(self, ids: Sequence[str]) -> dict[str, str]:
        self.calls.append(("texts", list(ids)))
        return {i: self.texts[i] for i in ids if i in self.texts}

    def hits(self, fused: Sequence[FusedHit]) -> list[Hit]:
        self.calls.append(("hits", ids(fused)))
        return [
            Hit(hit.segment_id, hit.score, content=self.texts[hit.segment_id])
            for hit in fused
            if hit.segment_id in self.texts
        ]


class TokenOverlap:
    name = "token-overlap"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        self.calls.append(list(texts))
        words = set(query.split())
        return [len(words & set(t.split())) / len(words) for t in texts]


def config(**fields: object) -> RetrievalConfig:
    """A config fusing all three channels unless told otherwise (the default fuses two), with no
    threshold unless told (these services have no calibration: their scores are the fusion's)."""
    fields.setdefault("hybrid_methods", ["semantic", "full_text", "keyword"])
    fields.setdefault("score_threshold", None)
    return RetrievalConfig.model_validate(fields)


def ids(hits: Sequence[FusedHit]) -> list[str]:
    return [h.segment_id for h in hits]


def scores(hits: Sequence[FusedHit]) -> dict[str, float]:
    return {h.segment_id: h.score for h in hits}


# semantic minmax: a=1, b=.5, c=0; full_text: c=1, a=.5, d=0; keyword: c=1, b=0
SEMANTIC = [("a", 0.90), ("b", 0.85), ("c", 0.80)]
FULL_TEXT = [("c", 8.0), ("a", 4.0), ("d", 0.0)]
KEYWORD = [("c", 2.0), ("b", 1.0)]


def three_channels() -> dict[Channel, FakeChannel]:
    return {
        "semantic": FakeChannel(SEMANTIC),
        "full_text": FakeChannel(FULL_TEXT),
        "keyword": FakeChannel(KEYWORD),
    }


def test_channels_run_concurrently() -> None:
    meet = threading.Barrier(2)
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel([("a", 0.9)], delay=0.2, meet=meet),
        "full_text": FakeChannel([("b", 3.0)], delay=0.2, meet=meet),
    }
    with DatasetSearch(channels) as service:
        hits, timings = service.fused_with_timings("q", config(hybrid_methods=["semantic", "full_text"]))
    assert set(ids(hits)) == {"a", "b"}  # both met: they ran at the same time
    assert set(timings) == {"semantic", "full_text", "searches"}
    assert timings["semantic"] >= 190.0 and timings["full_text"] >= 190.0
    assert timings["searches"] >= 190.0
    assert channels["semantic"].threads[0] != channels["full_text"].threads[0]


def test_channels_that_all_hold_the_gil_run_in_turn_in_the_calling_thread() -> None:
    """Threads would only take turns with the GIL; one failing does not stop the next."""
    caller = threading.current_thread().name
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel([("a", 0.9)], delay=0.05, holds_gil=True),
        "full_text": FakeChannel([], error=StoreError("shard closed"), holds_gil=True),
        "keyword": FakeChannel([("c", 2.0)], delay=0.05, holds_gil=True),
    }
    with DatasetSearch(channels) as service:
        hits, timings = service.fused_with_timings("q", config())
    assert set(ids(hits)) == {"a", "c"}
    assert [ch.threads for ch in channels.values()] == [[caller], [caller], [caller]]
    assert timings["searches"] >= timings["semantic"] + timings["keyword"] >= 100.0


def test_one_channel_not_holding_the_gil_puts_the_others_beside_it() -> None:
    """E.g. a query still to embed: the BM25 search runs while the model works outside the GIL."""
    meet = threading.Barrier(2)
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel([("a", 0.9)], delay=0.2, holds_gil=False, meet=meet),
        "full_text": FakeChannel([("b", 3.0)], delay=0.2, holds_gil=True, meet=meet),
    }
    with DatasetSearch(channels) as service:
        hits = service.fused("q", config(hybrid_methods=["semantic", "full_text"]))
    assert set(ids(hits)) == {"a", "b"}  # both met: they ran at the same time
    assert channels["full_text"].threads[0].startswith("zhiku-retrieve")


def test_each_channel_recalls_effective_recall_k() -> None:
    channels = three_channels()
    with DatasetSearch(channels) as service:
        service.fused("q", config(top_k=20))
        service.fused("q", config(top_k=40))
        service.fused("q", config(top_k=2, recall_k=7))
    for channel in channels.values():
        assert channel.calls == [("q", 100), ("q", 160), ("q", 7)]


def test_a_rerank_model_reads_fewer_candidates_by_default() -> None:
    reranked = config(top_k=4, reranking={"mode": "reranking_model"})
    assert reranked.effective_recall_k == 50
    assert config(top_k=30, reranking={"mode": "reranking_model"}).effective_recall_k == 120
    assert config(top_k=4).effective_recall_k == 100


def test_hybrid_weighted_hand_computed() -> None:
    weights = {"semantic": 0.5, "full_text": 0.3, "keyword": 0.2}
    with DatasetSearch(three_channels()) as service:
        reranking = {"mode": "weighted_score", "weights": weights}
        hits = service.fused("q", config(top_k=10, reranking=reranking))
    # a = .5 + .3*.5, b = .5*.5 + .2*0, c = 0 + .3 + .2, d = 0
    assert ids(hits) == ["a", "c", "b", "d"]
    assert scores(hits) == pytest.approx({"a": 0.65, "c": 0.5, "b": 0.25, "d": 0.0})
    assert hits[1].scores == {"semantic": 0.80, "full_text": 8.0, "keyword": 2.0}
    assert hits[1].ranks == {"semantic": 3, "full_text": 1, "keyword": 1}


def test_threshold_then_top_k() -> None:
    weights = {"semantic": 0.5, "full_text": 0.3, "keyword": 0.2}
    with DatasetSearch(three_channels()) as service:
        cfg = config(top_k=10, score_threshold=0.2, reranking={"weights": weights})
        assert ids(service.fused("q", cfg)) == ["a", "c", "b"]
        cfg = config(top_k=2, score_threshold=0.2, reranking={"weights": weights})
        assert ids(service.fused("q", cfg)) == ["a", "c"]


def test_single_channel_keeps_raw_scores() -> None:
    with DatasetSearch(three_channels()) as service:
        cfg = config(search_method="semantic_search", score_threshold=0.85, top_k=10)
        hits = service.fused("q", cfg)
    assert scores(hits) == {"a": 0.90, "b": 0.85}


def test_rrf_mode() -> None:
    channels = three_channels()
    cfg = config(
        hybrid_methods=["semantic", "full_text"],
        top_k=10,
        reranking={"mode": "rrf", "rrf_k": 60, "weights": {"semantic": 1.0, "full_text": 1.0}},
    )
    with DatasetSearch(channels) as service:
        hits = service.fused("q", cfg)
    # a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62, d: 1/63; divided by the maximum 2/61
    expected = {"a": 1 / 61 + 1 / 62, "c": 1 / 63 + 1 / 61, "b": 1 / 62, "d": 1 / 63}
    assert ids(hits) == ["a", "c", "b", "d"]
    assert scores(hits) == pytest.approx({k: v * 61 / 2 for k, v in expected.items()})
    assert channels["keyword"].calls == []


def test_none_mode_several_channels() -> None:
    cfg = config(hybrid_methods=["semantic", "full_text"], top_k=10, reranking={"mode": "none"})
    with DatasetSearch(three_channels()) as service:
        hits = service.fused("q", cfg)
    assert scores(hits) == pytest.approx({"a": 1.0, "c": 1.0, "b": 0.5, "d": 0.0})


def test_reorder_puts_best_at_both_ends() -> None:
    semantic = [(f"s{i}", 1.0 - i / 10) for i in range(1, 6)]
    with DatasetSearch({"semantic": FakeChannel(semantic)}) as service:
        cfg = config(search_method="semantic_search", top_k=5, reorder=True)
        assert ids(service.fused("q", cfg)) == ["s1", "s3", "s5", "s4", "s2"]


def test_dead_segments_never_come_out_and_take_no_rank() -> None:
    catalog = Catalog({"b": "text b", "c": "text c", "d": "text d"})  # "a" disabled
    with DatasetSearch(three_channels(), catalog=catalog) as service:
        hits = service.fused(
            "q", config(top_k=10, reranking={"weights": {"semantic": 0.5, "full_text": 0.4, "keyword": 0.1}})
        )
    assert "a" not in ids(hits)
    # the fused hits first; "a" among them is not served, so then the union, once
    assert catalog.calls == [("ids", ["a", "c", "b", "d"]), ("ids", ["a", "b", "c", "d"])]
    b = next(h for h in hits if h.segment_id == "b")
    assert b.ranks == {"semantic": 1, "keyword": 2}
    # semantic without "a": b=1, c=0; full_text without "a": c=1, d=0; keyword: c=1, b=0
    assert scores(hits) == pytest.approx({"c": 0.5, "b": 0.5, "d": 0.0})


def test_live_ids_filter_without_reading_texts_unless_a_rerank_model_reads_them() -> None:
    catalog = Catalog({"b": "the sky is grey", "c": "blue sky at dawn", "d": "apples are red"})
    weights = {"weights": {"semantic": 0.5, "full_text": 0.4, "keyword": 0.1}}
    service = DatasetSearch(three_channels(), catalog=catalog, rerank_model=TokenOverlap())
    with service:
        hits = service.fused("q", config(top_k=10, reranking=weights))
        # the fused hits first; "a" among them is not served, so then the union, before fusion
        assert sorted(ids(hits)) == ["b", "c", "d"]
        assert catalog.calls == [("ids", ["a", "c", "b", "d"]), ("ids", ["a", "b", "c", "d"])]
        reranked = service.fused("blue sky", config(top_k=10, reranking={"mode": "reranking_model"}))
    assert ids(reranked) == ["c", "b", "d"]
    assert catalog.calls[2:] == [("texts", ["a", "b", "c", "d"])]  # the texts, for the rerank model


def test_live_check_asks_only_about_the_hits_when_all_are_served() -> None:
    catalog = Catalog({"a": "", "b": "", "c": ""})  # "d" is not served, but not among the two best
    weights = {"weights": {"semantic": 0.5, "full_text": 0.4, "keyword": 0.1}}
    with DatasetSearch(three_channels(), catalog=catalog) as service:
        hits = service.fused("q", config(top_k=2, reranking=weights))
        assert ids(hits) == ["a", "c"] and catalog.calls == [("ids", ["a", "c"])]
        everything = service.fused("q", config(top_k=10, reranking=weights))
    assert "d" not in ids(everything)
    assert catalog.calls[1:] == [("ids", ["a", "c", "b", "d"]), ("ids", ["a", "b", "c", "d"])]


def test_search_reads_the_hits_records_once_when_all_are_served() -> None:
    """The live check of the fused hits is the read of their records: nothing is read again."""
    catalog = Catalog({"a": "text a", "b": "text b", "c": "text c"})
    weights = {"weights": {"semantic": 0.5, "full_text": 0.4, "keyword": 0.1}}
    with DatasetSearch(three_channels(), catalog=catalog) as service:
        fused = service.fused("q", config(top_k=2, reranking=weights))
        catalog.calls.clear()
        hits = service.search("q", config(top_k=2, reranking=weights))
        assert catalog.calls == [("hits", ["a", "c"])]
        assert [(h.segment_id, h.score, h.content) for h in hits] == [
            (f.segment_id, f.score, f"text {f.segment_id}") for f in fused
        ]
        catalog.calls.clear()
        everything = service.search("q", config(top_k=10, reranking=weights))
    # "d" is among the hits but not served: the union is checked, and the records read again
    assert [h.segment_id for h in everything] == ["a", "c", "b"]
    assert catalog.calls == [
        ("hits", ["a", "c", "b", "d"]),
        ("ids", ["a", "b", "c", "d"]),
        ("hits", ["a", "c", "b"]),
    ]


def test_search_needs_a_catalog() -> None:
    with DatasetSearch(three_channels()) as service, pytest.raises(ConfigError, match="segment catalog"):
        service.search("q", config())


def test_nothing_found_reads_nothing() -> None:
    catalog = Catalog({})
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel([]),
        "full_text": FakeChannel([]),
    }
    with DatasetSearch(channels, catalog=catalog) as service:
        assert service.fused("q", config(hybrid_methods=["semantic", "full_text"])) == []
        assert service.search("q", config(hybrid_methods=["semantic", "full_text"])) == []
    assert catalog.calls == []


def test_empty_query_returns_nothing_without_searching() -> None:
    channels = three_channels()
    with DatasetSearch(channels) as service:
        assert service.fused_with_timings("  \n", config()) == ([], {})
    assert all(channel.calls == [] for channel in channels.values())


def test_asked_channel_missing_is_a_config_error() -> None:
    service = DatasetSearch({"semantic": FakeChannel(SEMANTIC)})
    with service, pytest.raises(ConfigError, match="full_text, keyword"):
        service.fused("q", config())


def test_failed_channel_is_logged_and_fused_as_empty(caplog: pytest.LogCaptureFixture) -> None:
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel([], error=RuntimeError("embedding endpoint down")),
        "full_text": FakeChannel([("x", 3.0), ("y", 1.0)]),
    }
    cfg = config(
        hybrid_methods=["semantic", "full_text"],
        reranking={"weights": {"semantic": 0.5, "full_text": 0.5}},
    )
    with caplog.at_level(logging.WARNING), DatasetSearch(channels) as service:
        hits, timings = service.fused_with_timings("q", cfg)
    assert scores(hits) == pytest.approx({"x": 0.5, "y": 0.0})
    assert set(timings) == {"full_text", "searches"}
    assert "semantic search failed" in caplog.text
    assert "embedding endpoint down" in caplog.text


def test_every_channel_failing_raises_a_typed_error_naming_the_channel() -> None:
    cause = ModelUnavailable("no embedding model installed")
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel([], error=cause),
        "keyword": FakeChannel([], error=OSError("postings table locked")),
    }
    with DatasetSearch(channels) as service, pytest.raises(ChannelError) as caught:
        service.fused("q", config(hybrid_methods=["semantic", "keyword"]))
    error = caught.value
    assert isinstance(error, StoreError)
    assert error.channel == "semantic"
    assert error.__cause__ is cause
    assert error.code == "model_unavailable"
    assert "semantic search failed" in str(error) and "also failed: keyword" in str(error)


def test_single_channel_failure_is_raised() -> None:
    channels: dict[Channel, FakeChannel] = {"full_text": FakeChannel([], error=OSError("index file missing"))}
    service = DatasetSearch(channels)
    with service, pytest.raises(ChannelError, match=r"full_text search failed.*file missing") as e:
        service.fused("q", config(search_method="full_text_search"))
    assert e.value.code == "store_error"


def test_reranking_model_orders_live_texts() -> None:
    catalog = Catalog({"b": "the sky is grey", "c": "blue sky at dawn", "d": "apples are red"})
    model = TokenOverlap()
    cfg = config(top_k=10, reranking={"mode": "reranking_model", "model": "token-overlap"})
    with DatasetSearch(three_channels(), catalog=catalog, rerank_model=model) as service:
        hits = service.fused("blue sky", cfg)
    assert ids(hits) == ["c", "b", "d"]
    assert scores(hits) == {"c": 1.0, "b": 0.5, "d": 0.0}
    assert len(model.calls) == 1 and len(model.calls[0]) == 3  # "a" is not live


def test_reranking_model_applies_to_a_single_channel_too() -> None:
    catalog = Catalog({"a": "red", "b": "blue sky", "c": "sky"})
    cfg = config(search_method="semantic_search", reranking={"mode": "reranking_model"})
    service = DatasetSearch(three_channels(), catalog=catalog, rerank_model=TokenOverlap())
    with service:
        assert ids(service.fused("blue sky", cfg)) == ["b", "c", "a"]


@pytest.mark.parametrize(
    ("kwargs", "model", "message"),
    [
        ({}, None, "needs a rerank model"),
        ({"rerank_model": TokenOverlap()}, "token-overlap", "segment catalog"),
        (
            {"rerank_model": TokenOverlap(), "catalog": Catalog({})},
            "bge-reranker",
            "'bge-reranker'",
        ),
    ],
)
def test_reranking_model_prerequisites(kwargs: dict[str, object], model: str | None, message: str) -> None:
    cfg = config(reranking={"mode": "reranking_model", "model": model})
    service = DatasetSearch(three_channels(), **kwargs)  # type: ignore[arg-type]
    with service, pytest.raises(ConfigError, match=message):
        service.fused("q", cfg)


def test_dify_shaped_config() -> None:
    dify = {
        "search_method": "hybrid_search",
        "reranking_enable": False,
        "reranking_mode": "weighted_score",
        "weights": {
            "weight_type": "customized",
            "vector_setting": {"vector_weight": 0.7},
            "keyword_setting": {"keyword_weight": 0.3},
        },
        "top_k": 2,
        "score_threshold_enabled": True,
        "score_threshold": 0.5,
    }
    cfg = parse_retrieval(dify)
    unlimited = parse_retrieval({**dify, "score_threshold_enabled": False})
    with DatasetSearch(three_channels()) as service:
        hits = service.fused("q", cfg)
        without_threshold = service.fused("q", unlimited)
    # Dify's hybrid is semantic + full-text, weights .7 / .3: a = .7 + .3*.5 = .85, b = .35,
    # c = .30, d = 0 (the keyword channel is not searched)
    assert ids(hits) == ["a"]
    assert hits[0].score == pytest.approx(0.85)
    assert ids(without_threshold) == ["a", "b"]  # top_k 2


def test_dify_shaped_rerank_config() -> None:
    dify = {
        "search_method": "full_text_search",
        "reranking_enable": True,
        "reranking_model": {
            "reranking_provider_name": "x",
            "reranking_model_name": "token-overlap",
        },
        "top_k": 1,
        "score_threshold_enabled": False,
    }
    catalog = Catalog({"a": "red", "c": "blue sky", "d": "sky"})
    service = DatasetSearch(three_channels(), catalog=catalog, rerank_model=TokenOverlap())
    with service:
        assert ids(service.fused("blue sky", parse_retrieval(dify))) == ["c"]


def test_shared_executor_runs_channels_and_is_left_open() -> None:
    channels: dict[Channel, FakeChannel] = {
        "semantic": FakeChannel(SEMANTIC),
        "full_text": FakeChannel(FULL_TEXT),
    }
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="shared-pool") as pool:
        service = DatasetSearch(channels, executor=pool)
        service.fused("q", config(hybrid_methods=["semantic", "full_text"]))
        service.close()
        assert pool.submit(lambda: 1).result() == 1
    assert channels["semantic"].threads == [threading.current_thread().name]
    assert channels["full_text"].threads[0].startswith("shared-pool")
