"""TransformersEmbedding on a tiny random BERT written to a temp dir: the code path, not quality."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.fixtures.tiny_bert import save_tiny_bert  # noqa: E402
from zhiku.core.errors import ModelUnavailable  # noqa: E402
from zhiku.providers.embedding import create_embedding_model  # noqa: E402
from zhiku.providers.embedding.transformers_local import TransformersEmbedding  # noqa: E402

WORDS = "the a cat dog sat on mat ran fast slow query passage hello world : 知 识 库 检 索".split()
TEXTS = [
    "the cat sat on the mat",
    "dog",
    "hello world the dog ran fast and the cat ran slow on a mat",
    "知识库检索",
    "a cat",
]


@pytest.fixture(scope="module")
def bert_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_bert(tmp_path_factory.mktemp("tiny-bert"), WORDS)


def raw_hidden(path: Path, text: str) -> np.ndarray:
    """Token states of ``text`` straight from transformers, for checking the pooling."""
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = transformers.AutoModel.from_pretrained(path, local_files_only=True).eval()
    with torch.inference_mode():
        return model(**tokenizer([text], return_tensors="pt")).last_hidden_state[0].numpy()


def unit(vector: np.ndarray) -> np.ndarray:
    return vector / np.linalg.norm(vector)


def test_shapes_normalisation_and_name(bert_dir: Path) -> None:
    model = create_embedding_model("transformers", path=bert_dir)
    rows = model.embed_documents(TEXTS)
    assert model.dim == 32
    assert rows.shape == (5, 32) and rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert model.name.startswith(f"transformers/{bert_dir.name}@")
    assert model.name == TransformersEmbedding(bert_dir).name
    assert model.name != TransformersEmbedding(bert_dir, pooling="cls").name
    assert model.embed_documents([]).shape == (0, 32)


def test_length_sorted_batches_keep_input_order_and_ignore_padding(bert_dir: Path) -> None:
    model = TransformersEmbedding(bert_dir, batch_size=2)
    seen: list[tuple[int, int]] = []
    batched = model.embed_documents(TEXTS, on_progress=lambda d, t: seen.append((d, t)))
    alone = np.stack([model.embed_documents([text])[0] for text in TEXTS])
    np.testing.assert_allclose(batched, alone, atol=1e-5)
    assert seen == [(2, 5), (4, 5), (5, 5)]


def test_mean_and_cls_pooling_match_the_token_states(bert_dir: Path) -> None:
    hidden = raw_hidden(bert_dir, TEXTS[0])
    mean = TransformersEmbedding(bert_dir, pooling="mean").embed_documents([TEXTS[0]])[0]
    cls = TransformersEmbedding(bert_dir, pooling="cls").embed_documents([TEXTS[0]])[0]
    np.testing.assert_allclose(mean, unit(hidden.mean(axis=0)), atol=1e-5)
    np.testing.assert_allclose(cls, unit(hidden[0]), atol=1e-5)
    raw = TransformersEmbedding(bert_dir, pooling="cls", normalize=False).embed_query(TEXTS[0])
    np.testing.assert_allclose(raw, hidden[0], atol=1e-5)


def test_prefixes_and_truncation(bert_dir: Path) -> None:
    plain = TransformersEmbedding(bert_dir)
    prefixed = TransformersEmbedding(bert_dir, query_prefix="query : ", passage_prefix="passage : ")
    np.testing.assert_allclose(
        prefixed.embed_query("hello world"), plain.embed_documents(["query : hello world"])[0], atol=1e-5
    )
    np.testing.assert_allclose(
        prefixed.embed_documents(["hello world"])[0], plain.embed_query("passage : hello world"), atol=1e-5
    )
    short = TransformersEmbedding(bert_dir, max_length=5)  # [CLS] + 3 tokens + [SEP]
    np.testing.assert_allclose(
        short.embed_query("the cat sat on the mat"), plain.embed_query("the cat sat"), atol=1e-5
    )


def test_missing_model_directory_or_weights(tmp_path: Path, bert_dir: Path) -> None:
    with pytest.raises(ModelUnavailable, match="not found"):
        TransformersEmbedding(tmp_path / "absent")
    with pytest.raises(ModelUnavailable, match="config.json"):
        TransformersEmbedding(tmp_path)
    (tmp_path / "config.json").write_text((bert_dir / "config.json").read_text())
    with pytest.raises(ModelUnavailable, match="no model weights"):
        create_embedding_model("transformers", path=tmp_path)
