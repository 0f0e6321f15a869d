"""N-choose-1 routers: ``embedding`` (offline default), ``function_call`` and ``react`` (LLM)."""

from zhiku.retrieval.routers.embedding import EmbeddingRouter
from zhiku.retrieval.routers.function_call import FunctionCallRouter
from zhiku.retrieval.routers.react import ReactRouter

ROUTERS = ("embedding", "function_call", "react")

__all__ = ["ROUTERS", "EmbeddingRouter", "FunctionCallRouter", "ReactRouter"]
