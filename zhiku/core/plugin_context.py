"""What every plug-in factory that needs more than its own options is given: one context.

Index processors, routers and answerers are made as ``factory(context)`` (routers also get
their fallback). The chat model is a lazy callable, so a plug-in that never calls it works
without one configured; the length function and child splitter are those of the process rule
being applied (a router or an answerer gets the defaults).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from zhiku.core.config import Settings
from zhiku.core.errors import ConfigError

if TYPE_CHECKING:  # types only: core imports nothing above it at run time
    from zhiku.providers.llm import ChatModel
    from zhiku.splitters.base import TextSplitter
    from zhiku.splitters.length import LengthFunction

NO_CHAT_MODEL = "no chat model is configured (set ZHIKU_LLM_BASE_URL and ZHIKU_LLM_MODEL)"


@dataclass(frozen=True)
class PluginContext:
    """Shared inputs of plug-in factories.

    ``chat`` makes the chat model (None: none can be had, offline use); call it, or
    :meth:`chat_model`, only when the plug-in needs one: it may raise ConfigError when no
    endpoint is configured. ``length`` counts tokens as the process rule does (None: the splitter's
    default); ``child_splitter`` cuts a parent into children (parent-child index processors);
    ``language`` is the documents' language when the rule fixes one (None: detected).
    """

    settings: Settings
    chat: Callable[[], ChatModel] | None = None
    length: LengthFunction | None = None
    child_splitter: TextSplitter | None = None
    language: Literal["zh", "en"] | None = None

    def chat_model(self) -> ChatModel:
        """The chat model; ConfigError when none is configured."""
        if self.chat is None:
            raise ConfigError(NO_CHAT_MODEL)
        return self.chat()
