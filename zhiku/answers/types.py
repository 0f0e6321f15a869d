"""What an answer is made of: the query plan, citations, the answer, and its streamed events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from zhiku.answers.sources import Source

#: What understanding decided: answer from the knowledge base, let the chat model answer alone
#: (labelled as such), or refuse politely.
Action = Literal["answer", "chat", "refuse"]


@dataclass(frozen=True)
class AgentStep:
    """One search the model asked for: what it thought, what it searched, what it read."""

    number: int
    query: str
    thought: str = ""
    found: tuple[int, ...] = ()  # the source numbers the search returned (new and already read)
    error: str | None = None  # why the call was not run (bad arguments, a repeated query)

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "query": self.query,
            "thought": self.thought,
            "found": list(self.found),
            "error": self.error,
        }


@dataclass(frozen=True)
class QueryPlan:
    """What was asked and what was searched, each step visible.

    ``search_query`` drives full-text and keyword search; ``semantic_query`` (a HyDE passage, or
    the search query) drives the semantic channel. With several HyDE passages, ``hypotheses``
    holds them all (``semantic_query`` is the first): each drives a search of its own.
    """

    question: str
    search_query: str
    semantic_query: str
    condensed: bool = False
    folded: bool = False  # condensed offline: the earlier questions prepended to this one
    hyde: bool = False
    hypotheses: tuple[str, ...] = ()
    intent: str | None = None
    action: Action = "answer"
    datasets: tuple[str, ...] | None = None  # restricted by the intent, else None (as asked)
    section: str | None = None  # an intent's fixed section
    sections: tuple[str, ...] = ()  # the sections the chat model chose for this question
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "search_query": self.search_query,
            "semantic_query": self.semantic_query,
            "condensed": self.condensed,
            "folded": self.folded,
            "hyde": self.hyde,
            "hypotheses": list(self.hypotheses),
            "intent": self.intent,
            "action": self.action,
            "datasets": list(self.datasets) if self.datasets is not None else None,
            "section": self.section,
            "sections": list(self.sections),
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class Citation:
    """``[number]`` in the answer text, pointing at one source."""

    number: int
    segment_id: str
    document_name: str
    repaired: bool = False  # added by citation repair, not written by the answerer

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "segment_id": self.segment_id,
            "document_name": self.document_name,
            "repaired": self.repaired,
        }


@dataclass
class Answer:
    """A finished answer. ``text`` holds ``[n]`` markers that ``citations`` resolve; ``sources``
    are all the passages the answerer saw (cited or not), numbered as in the text."""

    text: str
    citations: list[Citation]
    sources: list[Source]
    plan: QueryPlan
    answerer: str  # "extractive" or "llm"
    conversation_id: str | None = None
    message_id: str | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)
    no_answer: bool = False  # nothing in the knowledge base passed the threshold, or refused
    grounded: bool = True  # False: the chat model answered alone, not from the knowledge base
    steps: list[AgentStep] = field(default_factory=list)  # agent mode: the searches it ran

    @property
    def cited_sources(self) -> list[Source]:
        numbers = {citation.number for citation in self.citations}
        return [source for source in self.sources if source.number in numbers]

    def to_dict(self) -> dict[str, Any]:
        return {
            "answer": self.text,
            "answerer": self.answerer,
            "citations": [c.to_dict() for c in self.citations],
            "sources": [s.to_dict() for s in self.sources],
            "plan": self.plan.to_dict(),
            "conversation_id": self.conversation_id,
            "message_id": self.message_id,
            "timings_ms": dict(self.timings_ms),
            "usage": dict(self.usage),
            "no_answer": self.no_answer,
            "grounded": self.grounded,
            "steps": [step.to_dict() for step in self.steps],
        }


EventKind = Literal["plan", "step", "sources", "delta", "answer"]


@dataclass(frozen=True)
class AnswerEvent:
    """One step of a streamed answer, in this order: ``plan``, (agent mode) a ``step`` per search,
    ``sources``, any number of ``delta`` (text as the answerer writes it, citations not yet
    repaired), then one ``answer`` with the finished :class:`Answer` (its text is the final,
    repaired one)."""

    kind: EventKind
    plan: QueryPlan | None = None
    step: AgentStep | None = None
    sources: tuple[Source, ...] = ()
    delta: str = ""
    answer: Answer | None = None
