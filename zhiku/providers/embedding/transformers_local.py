"""Any transformers encoder in a local directory (BERT, XLM-R, e5, bge, MiniLM...), on CPU.

Loading never reaches a model hub: ``HF_HUB_OFFLINE=1`` is set before transformers is imported
and every load passes ``local_files_only=True``; a missing directory or one without weights
raises :class:`ModelUnavailable`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from zhiku.core.errors import ModelUnavailable
from zhiku.providers.embedding.base import ProgressCallback, batches, l2_normalize, require_module

Pooling = Literal["mean", "cls"]

WEIGHT_FILES = (
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "pytorch_model.bin.index.json",
)


class TransformersEmbedding:
    """Embeds with the encoder in ``path``; ``pooling`` is ``"mean"`` (masked) or ``"cls"``.

    ``query_prefix``/``passage_prefix`` are prepended to queries/documents (e5 wants
    ``"query: "``/``"passage: "``, bge a query instruction). Texts are cut at ``max_length``
    tokens. Documents are batched by length so padding stays small. ``name`` defaults to the
    directory name plus a digest of its config, weights and these settings.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        pooling: Pooling = "mean",
        max_length: int = 512,
        query_prefix: str = "",
        passage_prefix: str = "",
        batch_size: int = 32,
        normalize: bool = True,
        name: str | None = None,
    ) -> None:
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        self.path = Path(path)
        self.pooling = pooling
        self.max_length = max_length
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        self.batch_size = batch_size
        self.normalize = normalize
        self._tokenizer, self._model = _load(self.path)
        self.dim: int = int(self._model.config.hidden_size)
        self.name: str = name or f"transformers/{self.path.name}@{self._settings_digest()}"

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        done = 0
        for batch in batches(order, self.batch_size):
            out[list(batch)] = self._encode([self.passage_prefix + texts[i] for i in batch])
            done += len(batch)
            if on_progress is not None:
                on_progress(done, len(texts))
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self._encode([self.query_prefix + text])[0]

    def _encode(self, texts: list[str]) -> np.ndarray:
        import torch

        encoded = self._tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt"
        )
        with torch.inference_mode():
            hidden = self._model(**encoded).last_hidden_state
            if self.pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = encoded["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
        vectors = pooled.float().numpy()
        return l2_normalize(vectors) if self.normalize else vectors.astype(np.float32)

    def _settings_digest(self) -> str:
        digest = hashlib.sha256()
        digest.update((self.path / "config.json").read_bytes())
        for weights in WEIGHT_FILES:
            if (self.path / weights).is_file():
                digest.update(f"{weights}:{(self.path / weights).stat().st_size}".encode())
        settings = [self.pooling, self.max_length, self.passage_prefix, self.normalize]
        digest.update(json.dumps(settings).encode())
        return digest.hexdigest()[:12]


def _load(path: Path) -> tuple[Any, Any]:
    """Tokenizer and model from ``path`` in eval mode, or ModelUnavailable saying what is missing."""
    if not path.is_dir():
        raise ModelUnavailable(f"embedding model directory not found: {path}")
    if not (path / "config.json").is_file():
        raise ModelUnavailable(f"no config.json in {path}: not a transformers model directory")
    if not any((path / name).is_file() for name in WEIGHT_FILES):
        raise ModelUnavailable(f"no model weights in {path} (expected one of {', '.join(WEIGHT_FILES)})")
    require_module("torch", "torch")
    require_module("transformers", "transformers")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    from transformers import AutoModel, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModel.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailable(f"cannot load the transformers model in {path}: {exc}") from exc
    model.eval()
    return tokenizer, model
