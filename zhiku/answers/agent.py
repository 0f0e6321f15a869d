"""Agent mode: the chat model decides whether to search, with what query, and whether to search
again after reading the results, then answers citing what it read.

The model calls ``kb_search`` (function calling; a model without tools may write ReAct lines,
``Action: kb_search`` / ``Action Input: …``). Every passage it reads gets one number for the whole
loop, so ``[n]`` in its answer points at one source however many searches came before. The loop
is bounded three ways — ``max_steps`` searches, ``agent_seconds`` of wall time, and the same query
asked twice — after which the model must answer from what it has (tools withdrawn).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from zhiku.answers.config import AnswerConfig
from zhiku.answers.prompts import AGENT_SYSTEM, sources_block
from zhiku.answers.sources import Source, assemble_sources
from zhiku.answers.types import AgentStep
from zhiku.core.cancellation import checkpoint
from zhiku.core.documents import Hit
from zhiku.providers.llm import ChatModel, ChatResult, Tool
from zhiku.text.language import Language

SEARCH_TOOL = "kb_search"
NOTHING_READ = "no relevant passage found"
#: The longest query the model may search with (characters); a longer one is cut.
MAX_QUERY_CHARS = 500
_REACT_ACTION = re.compile(r"Action:\s*kb_search\s*\n\s*Action Input:\s*(.+)", re.IGNORECASE)
_REACT_FINAL = re.compile(r"Final Answer:\s*", re.IGNORECASE)

#: One search as the agent runs it: a query → hits.
Search = Callable[[str], list[Hit]]


@dataclass
class AgentRun:
    """What the loop produced: the steps, every source read (numbered), the answer text, and why
    it stopped."""

    steps: list[AgentStep] = dataclasses.field(default_factory=list)
    sources: list[Source] = dataclasses.field(default_factory=list)
    text: str = ""
    stopped: str = "answered"  # answered, max_steps, time, repeated_query


def _search_tool() -> Tool:
    return Tool(
        name=SEARCH_TOOL,
        description="Search the knowledge base; returns numbered passages to cite as [n].",
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string", "description": "what to search for"}},
            "required": ["query"],
        },
    )


class AgentLoop:
    """Runs one question through the model and the search tool; :meth:`run` yields each step as
    it completes and returns the :class:`AgentRun` at the end."""

    def __init__(
        self,
        chat: ChatModel,
        search: Search,
        config: AnswerConfig,
        count_tokens: Callable[[str], int],
        language: Language,
    ) -> None:
        self._chat = chat
        self._search = search
        self._config = config
        self._count_tokens = count_tokens
        self._language = language

    def run(self, question: str, history: Sequence[dict[str, str]]) -> Iterator[AgentStep | AgentRun]:
        result = AgentRun()
        by_segment: dict[str, Source] = {}
        budget = self._config.context_tokens
        messages: list[dict[str, Any]] = [{"role": "system", "content": AGENT_SYSTEM[self._language]}]
        messages += history
        messages.append({"role": "user", "content": question})
        deadline = time.monotonic() + self._config.agent_seconds
        asked: set[str] = set()
        while True:
            checkpoint()
            stop = self._stop_reason(result, deadline)
            reply = self._call(messages, tools=stop is None)
            calls = _calls_of(reply) if stop is None else []
            if not calls:
                result.text = _REACT_FINAL.split(reply.content, maxsplit=1)[-1].strip()
                result.stopped = stop or "answered"
                break
            messages.append(_assistant_message(reply, calls))
            for call_id, query, call_error in calls:
                number = len(result.steps) + 1
                key = " ".join(query.lower().split())
                repeated = call_error is None and key in asked
                error = "this query was already searched" if repeated else call_error
                if error is not None or number > self._config.max_steps:
                    step = AgentStep(number, query, reply.content, error=error or "no searches left")
                    observation = f"error: {step.error}"
                else:
                    asked.add(key)
                    hits = self._search(query[:MAX_QUERY_CHARS])
                    found, budget = self._read(hits, by_segment, result.sources, budget)
                    step = AgentStep(number, query, reply.content, tuple(s.number for s in found))
                    observation = sources_block(found, self._language) if found else NOTHING_READ
                result.steps.append(step)
                yield step
                messages.append(_tool_message(call_id, observation, react=call_id is None))
            if any(step.error == "this query was already searched" for step in result.steps[-len(calls) :]):
                result.stopped = "repeated_query"
                messages.append({"role": "user", "content": _answer_now(self._language)})
                reply = self._call(messages, tools=False)
                result.text = _REACT_FINAL.split(reply.content, maxsplit=1)[-1].strip()
                break
        yield result

    def _stop_reason(self, result: AgentRun, deadline: float) -> str | None:
        if len(result.steps) >= self._config.max_steps:  # a bad call counts: a model may never stop
            return "max_steps"
        if time.monotonic() >= deadline:
            return "time"
        return None

    def _call(self, messages: list[dict[str, Any]], *, tools: bool) -> ChatResult:
        if tools:
            limit = self._config.max_answer_tokens
            return self._chat.chat(messages, tools=[_search_tool()], tool_choice="auto", max_tokens=limit)
        # tools withdrawn: the model must answer from what it read
        final = [*messages, {"role": "user", "content": _answer_now(self._language)}]
        return self._chat.chat(final, max_tokens=self._config.max_answer_tokens)

    def _read(
        self, hits: Sequence[Hit], by_segment: dict[str, Source], read: list[Source], budget: int
    ) -> tuple[list[Source], int]:
        """The sources of one search, numbered for the whole loop: a passage read before keeps its
        number; a new one takes the next, within what is left of the context budget."""
        fresh = [hit for hit in hits if hit.segment_id not in by_segment]
        assembled = assemble_sources(
            fresh,
            max_tokens=max(budget, 0),
            count_tokens=self._count_tokens,
            max_sources=self._config.max_sources,
        )
        found = [by_segment[hit.segment_id] for hit in hits if hit.segment_id in by_segment]
        for source in assembled:
            numbered = dataclasses.replace(source, number=len(read) + 1)
            read.append(numbered)
            by_segment[numbered.segment_id] = numbered
            found.append(numbered)
            budget -= self._count_tokens(numbered.text)
        return found, budget


def _calls_of(reply: ChatResult) -> list[tuple[str | None, str, str | None]]:
    """(call id, query, error) of each search the reply asks for: tool calls, or one ReAct action
    (id None) when the model wrote text instead."""
    calls: list[tuple[str | None, str, str | None]] = []
    for call in reply.tool_calls:
        query = call.arguments.get("query")
        if call.name != SEARCH_TOOL:
            calls.append((call.id, "", f"unknown tool {call.name!r}; the only tool is {SEARCH_TOOL}"))
        elif not isinstance(query, str) or not query.strip():
            calls.append((call.id, "", "arguments must be a JSON object with a non-empty 'query' string"))
        else:
            calls.append((call.id, query.strip(), None))
    if not calls and (react := _REACT_ACTION.search(reply.content)):
        calls.append((None, react.group(1).strip().strip('"'), None))
    return calls


def _assistant_message(reply: ChatResult, calls: list[tuple[str | None, str, str | None]]) -> dict[str, Any]:
    if all(call_id is None for call_id, _, _ in calls):  # ReAct: the text is the action
        return {"role": "assistant", "content": reply.content}
    return {
        "role": "assistant",
        "content": reply.content or None,
        "tool_calls": [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": call.raw_arguments},
            }
            for call in reply.tool_calls
        ],
    }


def _tool_message(call_id: str | None, observation: str, *, react: bool) -> dict[str, Any]:
    if react:
        return {"role": "user", "content": f"Observation: {observation}"}
    return {"role": "tool", "tool_call_id": call_id, "content": observation}


def _answer_now(language: Language) -> str:
    if language == "zh":
        return "请根据已经读到的资料直接回答，并用[n]引用；资料中没有的就说没有找到。"
    return "Answer now from the passages you have read, citing them as [n]; say so if they do not answer it."

