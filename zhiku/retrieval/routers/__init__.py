"""N-choose-1 routers: ``embedding`` (offline default, and every LLM router's fallback) and the
LLM routers in the :data:`llm_routers` registry (``function_call``, ``react``, and any added by
entry point ``zhiku.plugins`` as ``routers.<name>``), each made as ``factory(chat=, fallback=)``."""

from zhiku.core.registry import Registry
from zhiku.retrieval.routers.embedding import EmbeddingRouter
from zhiku.retrieval.routers.function_call import FunctionCallRouter
from zhiku.retrieval.routers.react import ReactRouter
from zhiku.retrieval.types import Router

EMBEDDING_ROUTER = "embedding"

llm_routers: Registry[Router] = Registry("routers")
llm_routers.add("function_call", FunctionCallRouter)
llm_routers.add("react", ReactRouter)


def router_names() -> list[str]:
    """Every router a request may name."""
    return [EMBEDDING_ROUTER, *llm_routers.names()]


__all__ = ["EMBEDDING_ROUTER", "EmbeddingRouter", "llm_routers", "router_names"]
