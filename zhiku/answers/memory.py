"""Conversation memory in the metadata database: what was asked and answered, in order.

The history a model sees is cut to a token budget, newest turns first, whole turns only: a
question without its answer (or the reverse) misleads a condense step more than no history.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from zhiku.core.db.models import ConversationRow, MessageRow, new_id, utcnow
from zhiku.core.errors import NotFound

#: Characters of the first question kept as a new conversation's name.
NAME_CHARS = 40
#: Most conversations or messages one listing returns.
MAX_PAGE = 100


@dataclass(frozen=True)
class Conversation:
    id: str
    name: str
    user: str
    created_at: datetime
    updated_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "user": self.user,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }


@dataclass(frozen=True)
class Message:
    id: str
    conversation_id: str
    role: str  # "user" or "assistant"
    text: str
    tokens: int
    answerer: str | None
    plan: dict[str, Any] | None
    resources: list[Any]
    created_at: datetime


@dataclass(frozen=True)
class Turn:
    """A question and its answer, as history for the next question."""

    question: str
    answer: str


class ConversationStore:
    """Conversations of one knowledge base. ``owner`` (an API key id, or None for local use)
    scopes every call: a key never reads, renames or deletes another key's conversations."""

    def __init__(self, sessions: sessionmaker[Session], count_tokens: Callable[[str], int]) -> None:
        self._sessions = sessions
        self._count_tokens = count_tokens

    def create(self, first_question: str, *, user: str = "", owner: str | None = None) -> Conversation:
        name = " ".join(first_question.split())[:NAME_CHARS]
        with self._sessions.begin() as session:
            row = ConversationRow(name=name, user=user, api_key_id=owner)
            session.add(row)
            session.flush()
            return _conversation(row)

    def get(self, conversation_id: str, *, user: str | None = None, owner: str | None = None) -> Conversation:
        with self._sessions() as session:
            return _conversation(self._row(session, conversation_id, user, owner))

    def recent(
        self, *, user: str | None = None, owner: str | None = None, limit: int = 20, before: str | None = None
    ) -> list[Conversation]:
        """Newest first; ``before`` (a conversation id) pages on from that conversation."""
        limit = max(1, min(limit, MAX_PAGE))
        with self._sessions() as session:
            query = select(ConversationRow).where(_owned(owner))
            if user is not None:
                query = query.where(ConversationRow.user == user)
            if before is not None:
                anchor = self._row(session, before, user, owner)
                query = query.where(
                    (ConversationRow.updated_at < anchor.updated_at)
                    | ((ConversationRow.updated_at == anchor.updated_at) & (ConversationRow.id < anchor.id))
                )
            query = query.order_by(ConversationRow.updated_at.desc(), ConversationRow.id.desc()).limit(limit)
            return [_conversation(row) for row in session.scalars(query)]

    def rename(
        self, conversation_id: str, name: str, *, user: str | None = None, owner: str | None = None
    ) -> Conversation:
        with self._sessions.begin() as session:
            row = self._row(session, conversation_id, user, owner)
            row.name = name
            return _conversation(row)

    def delete(self, conversation_id: str, *, user: str | None = None, owner: str | None = None) -> None:
        with self._sessions.begin() as session:
            row = self._row(session, conversation_id, user, owner)
            session.execute(delete(MessageRow).where(MessageRow.conversation_id == row.id))
            session.delete(row)

    def messages(
        self, conversation_id: str, *, user: str | None = None, owner: str | None = None, limit: int = 20
    ) -> list[Message]:
        """The last ``limit`` messages, oldest first."""
        limit = max(1, min(limit, MAX_PAGE))
        with self._sessions() as session:
            self._row(session, conversation_id, user, owner)
            rows = session.scalars(
                select(MessageRow)
                .where(MessageRow.conversation_id == conversation_id)
                .order_by(MessageRow.seq.desc())
                .limit(limit)
            ).all()
            return [_message(row) for row in reversed(rows)]

    def history(self, conversation_id: str, *, max_tokens: int) -> list[Turn]:
        """The latest whole turns within ``max_tokens`` (question and answer counted), oldest
        first, so they read in order."""
        turns: list[Turn] = []
        budget = max_tokens
        with self._sessions() as session:
            rows = session.scalars(
                select(MessageRow)
                .where(MessageRow.conversation_id == conversation_id)
                .order_by(MessageRow.seq.desc())
                .limit(2 * MAX_PAGE)
            ).all()
        answer: MessageRow | None = None
        for row in rows:  # newest first: an answer, then its question
            if row.role == "assistant":
                answer = row
                continue
            if answer is None:
                continue  # a question whose answer was never stored
            cost = row.tokens + answer.tokens
            if cost > budget:
                break
            budget -= cost
            turns.append(Turn(row.text, answer.text))
            answer = None
        return list(reversed(turns))

    def append_turn(
        self,
        conversation_id: str,
        question: str,
        answer: str,
        *,
        answerer: str,
        plan: dict[str, Any],
        resources: Sequence[dict[str, Any]],
        message_id: str | None = None,
    ) -> str:
        """Store a question and its answer together (both or neither); the answer's message id."""
        with self._sessions.begin() as session:
            row = session.get(ConversationRow, conversation_id, with_for_update=True)
            if row is None:
                raise NotFound(f"conversation {conversation_id!r} not found")
            last = session.scalar(
                select(func.max(MessageRow.seq)).where(MessageRow.conversation_id == conversation_id)
            )
            seq = -1 if last is None else last
            session.add(
                MessageRow(
                    conversation_id=conversation_id,
                    seq=seq + 1,
                    role="user",
                    text=question,
                    tokens=self._count_tokens(question),
                )
            )
            reply = MessageRow(
                id=message_id or new_id(),
                conversation_id=conversation_id,
                seq=seq + 2,
                role="assistant",
                text=answer,
                tokens=self._count_tokens(answer),
                answerer=answerer,
                plan=plan,
                resources=list(resources),
            )
            session.add(reply)
            row.updated_at = utcnow()
            session.flush()
            return reply.id

    def _row(
        self, session: Session, conversation_id: str, user: str | None, owner: str | None
    ) -> ConversationRow:
        row = session.get(ConversationRow, conversation_id)
        if row is None or row.api_key_id != owner or (user is not None and row.user != user):
            raise NotFound(f"conversation {conversation_id!r} not found")
        return row


def _owned(owner: str | None) -> Any:
    if owner is None:
        return ConversationRow.api_key_id.is_(None)
    return ConversationRow.api_key_id == owner


def _conversation(row: ConversationRow) -> Conversation:
    return Conversation(row.id, row.name, row.user, row.created_at, row.updated_at)


def _message(row: MessageRow) -> Message:
    return Message(
        row.id,
        row.conversation_id,
        row.role,
        row.text,
        row.tokens,
        row.answerer,
        row.plan,
        list(row.resources or []),
        row.created_at,
    )
