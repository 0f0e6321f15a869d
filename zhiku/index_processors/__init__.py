"""Index processors by ``doc_form``: ``paragraph``, ``qa_model`` and ``hierarchical_model`` (parent-child).

Each is made as ``factory(context)`` from the :class:`~zhiku.core.plugin_context.PluginContext`
of the process rule being applied: its chat model (lazy), length function and child splitter.
"""

from typing import Protocol

from zhiku.core.errors import ConfigError
from zhiku.core.plugin_context import NO_CHAT_MODEL, PluginContext
from zhiku.core.registry import Registry
from zhiku.index_processors.base import ChunkFailure, IndexOutcome, IndexProcessor
from zhiku.index_processors.paragraph import ParagraphIndexProcessor
from zhiku.index_processors.parent_child import ParentChildIndexProcessor
from zhiku.index_processors.qa import QAIndexProcessor


class IndexProcessorFactory(Protocol):
    """The contract of the ``index_processors`` registry."""

    def __call__(self, context: PluginContext, /) -> IndexProcessor: ...


index_processors: Registry[IndexProcessorFactory] = Registry("index_processors")


@index_processors.register("paragraph")
def _paragraph(context: PluginContext, /) -> IndexProcessor:
    return ParagraphIndexProcessor()


@index_processors.register("qa_model")
def _qa(context: PluginContext, /) -> IndexProcessor:
    if context.chat is None:
        raise ConfigError(f"the qa_model index needs a chat model: {NO_CHAT_MODEL}")
    return QAIndexProcessor(context.chat, language=context.language)


@index_processors.register("hierarchical_model")
def _parent_child(context: PluginContext, /) -> IndexProcessor:
    return ParentChildIndexProcessor(context.child_splitter)


__all__ = [
    "ChunkFailure",
    "IndexOutcome",
    "IndexProcessor",
    "IndexProcessorFactory",
    "ParagraphIndexProcessor",
    "ParentChildIndexProcessor",
    "QAIndexProcessor",
    "index_processors",
]
