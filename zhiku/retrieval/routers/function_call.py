"""The function-call router: each dataset is a tool named by its id; the model calls one."""

from __future__ import annotations

from zhiku.providers.llm import ChatModel, Tool
from zhiku.retrieval.routers.llm_common import describe, match_dataset, route_with_llm
from zhiku.retrieval.types import DatasetProfile, RouteDecision, Router

SYSTEM_PROMPT = (
    "You route a user's question to the one knowledge base that can answer it. "
    "Each tool is a knowledge base, described by its description. "
    "Call exactly one tool, the best fit, with the question as its argument."
)


class FunctionCallRouter:
    """For models with tool calling (OpenAI, DeepSeek, Qwen, recent Ollama models)."""

    name = "function_call"

    def __init__(self, chat: ChatModel, fallback: Router) -> None:
        self._chat = chat
        self._fallback = fallback

    def choose(self, query: str, profiles: list[DatasetProfile]) -> RouteDecision:
        def ask() -> DatasetProfile | None:
            tools = [
                Tool(
                    name=profile.id,
                    description=describe(profile),
                    parameters={
                        "type": "object",
                        "properties": {"query": {"type": "string", "description": "the question"}},
                        "required": ["query"],
                    },
                )
                for profile in profiles
            ]
            result = self._chat.chat(
                [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": query}],
                tools=tools,
                tool_choice="auto",
            )
            for call in result.tool_calls:
                chosen = match_dataset(call.name, profiles)
                if chosen is not None:
                    return chosen
            return None

        return route_with_llm(self.name, query, profiles, ask, self._fallback)
