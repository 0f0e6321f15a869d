"""Answer quality over conversations: does each turn get its own answer, and does a follow-up that
changes topic stay clear of the previous turn's source?

The bundled set (``zhiku/demo/conversations.json``, over the demo corpus) holds two- and
three-turn conversations in Chinese and English. Every later turn is marked ``depends`` (it
cannot be understood alone: *What about Sunday?*) or ``new_topic`` (it names its own subject).
Each turn is judged by its ``expected_text`` (a short fact of ``expected_file``):

- ``answer_contains``: share of turns whose answer holds the expected text; also per turn kind
  (``first``, ``depends``, ``new_topic``) and for every turn after the first (``follow_ups``).
- ``citation_precision``: share of cited sources that come from the expected file.
- ``new_topic_from_previous``: topic-changing follow-ups answered with the previous turn's fact
  instead of their own — the failure this set was written to catch.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zhiku.answers.citations import strip_markers
from zhiku.answers.types import Answer
from zhiku.evaluation.answers import normalise

BUNDLED_CONVERSATIONS = Path(__file__).resolve().parent.parent / "demo" / "conversations.json"
TURN_KINDS = ("first", "depends", "new_topic")

#: Asks one turn: (question, conversation id or None for a new one) → the answer, which carries
#: the conversation id the next turn continues.
AskTurn = Callable[[str, str | None], Answer]


@dataclass(frozen=True)
class ConversationTurn:
    question: str
    kind: str  # one of TURN_KINDS
    expected_file: str
    expected_text: str


@dataclass(frozen=True)
class Conversation:
    id: str
    language: str
    turns: tuple[ConversationTurn, ...]


def load_conversations(path: Path = BUNDLED_CONVERSATIONS) -> list[Conversation]:
    """The conversations in ``path``; a turn after the first without a valid ``follows`` is an
    error (a set that cannot be scored must not be half-scored)."""
    conversations: list[Conversation] = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        turns: list[ConversationTurn] = []
        for position, turn in enumerate(item["turns"]):
            kind = "first" if position == 0 else turn.get("follows")
            if kind not in TURN_KINDS or (position > 0) != (kind != "first"):
                where = f"{path.name}: conversation {item['id']} turn {position + 1}"
                raise ValueError(f"{where}: follows={kind!r}")
            expected = (turn["expected_file"], turn["expected_text"])
            turns.append(ConversationTurn(turn["question"], kind, *expected))
        conversations.append(Conversation(str(item["id"]), str(item["language"]), tuple(turns)))
    return conversations


@dataclass
class _Tally:
    turns: int = 0
    contains: int = 0

    def share(self) -> float:
        return round(self.contains / self.turns, 4) if self.turns else 0.0


@dataclass
class ConversationReport:
    answerer: str
    conversations: int = 0
    by_kind: dict[str, _Tally] = field(default_factory=lambda: {kind: _Tally() for kind in TURN_KINDS})
    by_language: dict[str, _Tally] = field(default_factory=dict)
    cited: int = 0
    cited_expected: int = 0
    new_topic_from_previous: int = 0
    failures: list[dict[str, str]] = field(default_factory=list)
    conversation_ids: list[str] = field(default_factory=list)  # stored while asking
    latencies_ms: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        every = _Tally(
            sum(t.turns for t in self.by_kind.values()), sum(t.contains for t in self.by_kind.values())
        )
        later = _Tally(
            self.by_kind["depends"].turns + self.by_kind["new_topic"].turns,
            self.by_kind["depends"].contains + self.by_kind["new_topic"].contains,
        )
        return {
            "set": "conversations",
            "answerer": self.answerer,
            "conversations": self.conversations,
            "turns": every.turns,
            "answer_contains": every.share(),
            "answer_contains_follow_ups": later.share(),
            **{f"answer_contains_{kind}": tally.share() for kind, tally in self.by_kind.items()},
            **{f"answer_contains_{lang}": tally.share() for lang, tally in sorted(self.by_language.items())},
            "citation_precision": round(self.cited_expected / self.cited, 4) if self.cited else 0.0,
            "new_topic_turns": self.by_kind["new_topic"].turns,
            "new_topic_from_previous": self.new_topic_from_previous,
            "ms_per_turn": round(statistics.median(self.latencies_ms), 1) if self.latencies_ms else 0.0,
            "failures": self.failures,
        }


def evaluate_conversations(
    conversations: Sequence[Conversation],
    ask: AskTurn,
    *,
    answerer: str,
    on_progress: Callable[[str, int, int], None] | None = None,
) -> ConversationReport:
    """Ask every conversation turn by turn, each in a conversation of its own, and score it."""
    report = ConversationReport(answerer)
    for done, conversation in enumerate(conversations, start=1):
        report.conversations += 1
        conversation_id: str | None = None
        previous: ConversationTurn | None = None
        for position, turn in enumerate(conversation.turns, start=1):
            started = time.perf_counter()
            answer = ask(turn.question, conversation_id)
            report.latencies_ms.append((time.perf_counter() - started) * 1000.0)
            if conversation_id is None and answer.conversation_id is not None:
                report.conversation_ids.append(answer.conversation_id)
            conversation_id = answer.conversation_id
            _score_turn(report, conversation, position, turn, previous, answer)
            previous = turn
        if on_progress is not None:
            on_progress(conversation.id, done, len(conversations))
    return report


def _score_turn(
    report: ConversationReport,
    conversation: Conversation,
    position: int,
    turn: ConversationTurn,
    previous: ConversationTurn | None,
    answer: Answer,
) -> None:
    text = normalise(strip_markers(answer.text))
    found = normalise(turn.expected_text) in text
    for tally in (report.by_kind[turn.kind], report.by_language.setdefault(conversation.language, _Tally())):
        tally.turns += 1
        tally.contains += found
    cited = answer.cited_sources
    report.cited += len(cited)
    report.cited_expected += sum(1 for source in cited if source.document_name == turn.expected_file)
    if found:
        return
    from_previous = (
        turn.kind == "new_topic" and previous is not None and normalise(previous.expected_text) in text
    )
    report.new_topic_from_previous += from_previous
    report.failures.append(
        {
            "conversation": conversation.id,
            "turn": str(position),
            "kind": turn.kind,
            "question": turn.question,
            "expected": turn.expected_text,
            "searched": answer.plan.search_query,
            "answer": answer.text[:300],
            **({"from_previous_turn": "yes"} if from_previous else {}),
        }
    )
