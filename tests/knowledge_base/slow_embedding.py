"""A slow, counting embedding model for lifecycle tests: the synthetic model, ``delay`` seconds
per text, with every text it embeds counted (and appended to ``log`` when given, one line per
text, so a parent process can watch a child's progress and count what was embedded again)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from zhiku.benchmarking.synthetic import SyntheticEmbedding
from zhiku.providers.embedding import ProgressCallback, embedding_models


class SlowCountingEmbedding:
    embedded = 0

    def __init__(self, delay: float = 0.01, log: str | None = None) -> None:
        self._model = SyntheticEmbedding()
        self._delay = delay
        self._log = Path(log) if log else None
        self.name = "slow-counting"
        self.dim = self._model.dim

    def embed_documents(
        self, texts: Sequence[str], *, on_progress: ProgressCallback | None = None
    ) -> np.ndarray:
        time.sleep(self._delay * len(texts))
        SlowCountingEmbedding.embedded += len(texts)
        if self._log is not None:
            with self._log.open("a") as handle:
                handle.write("x\n" * len(texts))
        return self._model.embed_documents(texts, on_progress=on_progress)

    def embed_query(self, text: str) -> np.ndarray:
        return self._model.embed_query(text)


def register() -> None:
    if "slow-counting" not in embedding_models.names():
        embedding_models.add("slow-counting", SlowCountingEmbedding)


def paragraphs(count: int) -> str:
    """``count`` distinct paragraphs of about 20 tokens: with ``max_tokens=32`` each is one chunk."""
    teas = ["龙井", "碧螺春", "铁观音", "大红袍", "普洱"]
    return "\n\n".join(
        f"Paragraph {n}: {teas[n % 5]} notes, batch {n * 7 % 1000}, water at {70 + n % 30} degrees."
        for n in range(count)
    )
