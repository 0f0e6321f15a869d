"""What the operator configured that a request may name, handed to validation as context."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationInfo

from zhiku.core.config import Settings


@dataclass(frozen=True)
class Choices:
    """What the operator configured that a request may name (validation context ``choices``):
    rerank models and tokenizers by name, embedding models (None: every registered one)."""

    rerank_models: frozenset[str] = frozenset()
    #: the ``rerank_model`` setting, accepted as well (not listed: a spec may name a directory)
    rerank_default: str | None = None
    tokenizers: frozenset[str] = frozenset()
    embedding_models: frozenset[str] | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> Choices:
        return cls(
            rerank_models=frozenset(settings.rerank_models),
            rerank_default=settings.rerank_model,
            tokenizers=frozenset(settings.tokenizers),
            embedding_models=(
                None if settings.api_embedding_models is None else frozenset(settings.api_embedding_models)
            ),
        )

    @classmethod
    def of(cls, info: ValidationInfo | None) -> Choices:
        found = (info.context or {}).get("choices") if info is not None else None
        return found if isinstance(found, Choices) else cls()
