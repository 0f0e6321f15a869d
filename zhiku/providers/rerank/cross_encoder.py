"""A cross-encoder in a local directory (ms-marco MiniLM, bge-reranker, ...) scoring pairs on CPU.

The model runs in float32 whatever dtype its checkpoint was saved in: half precision is slow on CPU.

Loading never reaches a model hub: ``HF_HUB_OFFLINE=1`` is set before transformers is imported
and every load passes ``local_files_only=True``.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from zhiku.core.errors import ConfigError, ModelUnavailable
from zhiku.providers.embedding.base import batches
from zhiku.providers.embedding.transformers_local import WEIGHT_FILES

Activation = Literal["sigmoid", "none"]


class CrossEncoderRerank:
    """Scores ``(query, text)`` pairs with the sequence-classification model in ``path``.

    Score scale: the model's relevance logit — the single logit of a one-label model, or
    ``logit[1] - logit[0]`` of a two-label model (label 1 = relevant) — passed through
    ``activation``. ``"sigmoid"`` gives a probability in ``(0, 1)`` (for a two-label model this
    is exactly the softmax probability of label 1), so a ``score_threshold`` reads the same for
    every model; ``"none"`` keeps the logit, any real number. Models with more labels are refused.

    Each pair is cut to ``max_length`` tokens by shortening the text only; a query too long for
    that is cut too. Texts are scored ``batch_size`` at a time, longest first so padding stays
    small; batching changes no score beyond float rounding. One forward pass runs at a time (a
    lock): a fast tokenizer cannot be used from two threads, and torch already uses every core.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        max_length: int = 512,
        batch_size: int = 16,
        activation: Activation = "sigmoid",
        name: str | None = None,
    ) -> None:
        if activation not in ("sigmoid", "none"):
            raise ConfigError(f"cross-encoder activation must be 'sigmoid' or 'none', got {activation!r}")
        if batch_size < 1:
            raise ConfigError(f"cross-encoder batch_size must be at least 1, got {batch_size}")
        self.path = Path(path)
        self.batch_size = batch_size
        self.activation: Activation = activation
        self.name: str = name or f"cross-encoder/{self.path.name}"
        self._tokenizer, self._model = _load(self.path)
        self.max_length = min(max_length, int(self._tokenizer.model_max_length))
        self._pair_specials = int(self._tokenizer.num_special_tokens_to_add(pair=True))
        if self.max_length < self._pair_specials + 2:
            raise ConfigError(f"cross-encoder max_length {max_length} leaves no room for a query and a text")
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CrossEncoderRerank(path={str(self.path)!r}, activation={self.activation!r})"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in input order (see the class docstring for the scale)."""
        if not texts:
            return []
        truncation = self._truncation(query)
        scores = [0.0] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        for batch in batches(order, self.batch_size):
            batch_scores = self._score(query, [texts[i] for i in batch], truncation)
            for i, score in zip(batch, batch_scores, strict=True):
                scores[i] = score
        return scores

    def _truncation(self, query: str) -> bool | str:
        """``"only_second"`` when the query leaves room for text, else ``True`` (cut both)."""
        with self._lock:
            query_tokens = len(self._tokenizer(query, add_special_tokens=False)["input_ids"])
        return "only_second" if query_tokens + self._pair_specials < self.max_length else True

    def _score(self, query: str, texts: list[str], truncation: bool | str) -> list[float]:
        import torch

        with self._lock:
            try:
                encoded = self._tokenizer(
                    [query] * len(texts),
                    texts,
                    padding=True,
                    truncation=truncation,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    logits = self._model(**encoded).logits.float()
            except (RuntimeError, ValueError, IndexError) as exc:
                raise ModelUnavailable(
                    f"cross-encoder {self.name!r} failed on {len(texts)} pairs: {exc}"
                ) from exc
        relevance = logits[:, 0] if logits.shape[1] == 1 else logits[:, 1] - logits[:, 0]
        if self.activation == "sigmoid":
            relevance = torch.sigmoid(relevance)
        return [float(score) for score in relevance.tolist()]


def _load(path: Path) -> tuple[Any, Any]:
    """Tokenizer and model from ``path`` in eval mode, or ModelUnavailable saying what is wrong."""
    if not path.is_dir():
        raise ModelUnavailable(f"cross-encoder directory not found: {path}")
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"no config.json in {path}: not a transformers model directory")
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        raise ModelUnavailable(f"no model weights in {path} (expected one of {', '.join(WEIGHT_FILES)})")
    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            raise ModelUnavailable(
                f"a cross-encoder needs the python package {module!r}; pip install 'zhiku[torch]'"
            )
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model, info = AutoModelForSequenceClassification.from_pretrained(
            path, local_files_only=True, output_loading_info=True, dtype=torch.float32
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailable(f"cannot load the cross-encoder in {path}: {exc}") from exc
    if info["missing_keys"]:
        # transformers fills a missing classification head with random weights: scores would be noise.
        missing = ", ".join(sorted(info["missing_keys"])[:3])
        raise ModelUnavailable(f"{path} is not a cross-encoder: its weights lack {missing}")
    labels = int(model.config.num_labels)
    if labels not in (1, 2):
        raise ModelUnavailable(f"{path} is a {labels}-label classifier, not a cross-encoder (1 or 2 labels)")
    model.eval()
    return tokenizer, model
