"""The pure BM25 functions: stable term ids, the weight and its inverse, Lucene's IDF."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zhiku.datasource.fulltext import bm25_math


def test_term_ids_are_stable_uint32_and_never_the_empty_term() -> None:
    # Fixed values: ids are persisted in stores, so they must never change between versions.
    assert bm25_math.term_id("apple") == 2472397210
    assert bm25_math.term_id("知识库") == 155562363
    ids = {bm25_math.term_id(f"token{i}") for i in range(5000)}
    assert len(ids) == 5000
    assert all(0 < i < 2**32 for i in ids)


def test_query_weights_count_repeats() -> None:
    weights = bm25_math.query_weights(["a", "b", "a"])
    assert weights == {bm25_math.term_id("a"): 2.0, bm25_math.term_id("b"): 1.0}
    assert bm25_math.query_weights([]) == {}


def test_document_weights_follow_the_formula() -> None:
    counts = {7: 3, 8: 1}
    weights = bm25_math.document_weights(counts, length=4, avgdl=8.0, k1=1.2, b=0.75)
    norm = 1.2 * (1 - 0.75 + 0.75 * 4 / 8.0)
    assert weights[7] == pytest.approx(3 * 2.2 / (3 + norm))
    assert weights[8] == pytest.approx(1 * 2.2 / (1 + norm))
    assert bm25_math.document_weights({}, length=0, avgdl=8.0) == {bm25_math.EMPTY_TERM: 0.0}


@pytest.mark.parametrize("length,avgdl", [(1, 10.0), (50, 12.5), (3000, 40.0)])
def test_raw_tf_inverts_float32_weights(length: int, avgdl: float) -> None:
    for tf in (1, 2, 5, 17, 120, 900):
        stored = float(np.float32(bm25_math.saturated_tf(tf, length, avgdl)))  # Qdrant keeps float32
        assert round(bm25_math.raw_tf(stored, length, avgdl)) == tf


def test_lucene_idf_and_average_length() -> None:
    assert bm25_math.lucene_idf(10, 3) == pytest.approx(math.log(1 + 7.5 / 3.5))
    assert bm25_math.lucene_idf(10, 10) > 0  # unlike Okapi's, never negative
    assert bm25_math.average_length(4, 10) == 2.5
    assert bm25_math.average_length(0, 0) == 1.0
