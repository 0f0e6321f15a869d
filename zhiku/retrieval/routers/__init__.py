"""N-choose-1 routers: ``embedding`` (offline default, and every other router's fallback) and the
routers of the :data:`routers` registry (``function_call``, ``react``, and any added by entry
point ``zhiku.plugins`` as ``routers.<name>``), each made as ``factory(context, fallback)``: a
router asks ``context.chat_model()`` only if it needs a chat model, so one that does not works
offline."""

from typing import Protocol

from zhiku.core.plugin_context import PluginContext
from zhiku.core.registry import Registry
from zhiku.retrieval.routers.embedding import EmbeddingRouter
from zhiku.retrieval.routers.function_call import FunctionCallRouter
from zhiku.retrieval.routers.react import ReactRouter
from zhiku.retrieval.types import Router

EMBEDDING_ROUTER = "embedding"


class RouterFactory(Protocol):
    """The contract of the ``routers`` registry; ``fallback`` is the embedding router."""

    def __call__(self, context: PluginContext, fallback: Router, /) -> Router: ...


routers: Registry[RouterFactory] = Registry("routers")


@routers.register("function_call")
def _function_call(context: PluginContext, fallback: Router, /) -> Router:
    return FunctionCallRouter(context.chat_model(), fallback)


@routers.register("react")
def _react(context: PluginContext, fallback: Router, /) -> Router:
    return ReactRouter(context.chat_model(), fallback)


def router_names() -> list[str]:
    """Every router a request may name: ``embedding`` and the installed ones."""
    return [EMBEDDING_ROUTER, *routers.available()]


__all__ = ["EMBEDDING_ROUTER", "EmbeddingRouter", "RouterFactory", "router_names", "routers"]
