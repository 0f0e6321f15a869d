"""The wire shapes of answers: Dify's chat-messages and conversations, OpenAI's chat completions.

Request models validate and bound every field; the ``render_*`` functions turn an
:class:`~zhiku.answers.types.Answer` into each API's JSON, so both APIs report the same sources.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from zhiku.answers.agent import SEARCH_TOOL
from zhiku.answers.config import AnswerConfig
from zhiku.answers.memory import Conversation, Message
from zhiku.answers.sources import Source
from zhiku.answers.types import AgentStep, Answer
from zhiku.api.schemas import MAX_MESSAGE_CHARS, MAX_NAME_CHARS, MAX_QUESTION_CHARS, Name

#: Most earlier messages an OpenAI-style request may carry.
MAX_MESSAGES = 100
#: Most parts of one message's content.
MAX_CONTENT_PARTS = 100


def _bounded_inputs(values: dict[str, Any]) -> dict[str, Any]:
    """Dify's ``inputs``: each text value at most :data:`MAX_MESSAGE_CHARS` characters."""
    for key, value in values.items():
        if isinstance(value, str) and len(value) > MAX_MESSAGE_CHARS:
            raise ValueError(f"{key[:80]!r}: at most {MAX_MESSAGE_CHARS} characters")
    return values


class ChatMessageBody(BaseModel):
    """Dify's ``POST /chat-messages``; ``datasets`` and ``answer`` are zhiku's (an app in Dify is
    bound to its datasets and settings; here the request names them)."""

    model_config = ConfigDict(extra="ignore")

    query: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS)
    inputs: Annotated[dict[Name, Any], AfterValidator(_bounded_inputs)] = Field(
        default_factory=dict,
        max_length=50,
        description=f"accepted for Dify clients; a text value at most {MAX_MESSAGE_CHARS} characters",
    )
    response_mode: Literal["blocking", "streaming"] = "streaming"
    conversation_id: str = Field("", max_length=64)
    user: str = Field("", max_length=MAX_NAME_CHARS)
    datasets: list[Name] | None = Field(None, max_length=50, description="dataset names or ids; default: all")
    answer: AnswerConfig | None = None


class ConversationListQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user: str | None = Field(None, max_length=255)
    last_id: str | None = Field(None, max_length=64)
    limit: int = Field(20, ge=1, le=100)


class MessageListQuery(BaseModel):
    model_config = ConfigDict(extra="ignore")

    conversation_id: str = Field(min_length=1, max_length=64)
    user: str | None = Field(None, max_length=255)
    limit: int = Field(20, ge=1, le=100)


class RenameBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    name: str = Field(min_length=1, max_length=255)
    user: str | None = Field(None, max_length=255)


class UserBody(BaseModel):
    model_config = ConfigDict(extra="ignore")

    user: str | None = Field(None, max_length=255)


class ContentPart(BaseModel):
    """One part of a message's content; only ``text`` parts are read (an image is ignored)."""

    model_config = ConfigDict(extra="ignore")

    type: str = Field("text", max_length=64)
    text: str | None = Field(None, max_length=MAX_MESSAGE_CHARS)


class OpenAIMessage(BaseModel):
    """One message; its text (a string, or the text parts together) is at most
    :data:`MAX_MESSAGE_CHARS` characters."""

    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "user", "assistant", "tool", "developer"]
    content: (
        Annotated[str, Field(max_length=MAX_MESSAGE_CHARS)]
        | Annotated[list[ContentPart], Field(max_length=MAX_CONTENT_PARTS)]
        | None
    ) = None

    @field_validator("content")
    @classmethod
    def _bounded_parts(cls, content: str | list[ContentPart] | None) -> str | list[ContentPart] | None:
        if isinstance(content, list) and sum(len(part.text or "") for part in content) > MAX_MESSAGE_CHARS:
            raise ValueError(f"at most {MAX_MESSAGE_CHARS} characters in all its parts")
        return content

    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(part.text or "" for part in self.content or [])


class ChatCompletionBody(BaseModel):
    """OpenAI's ``POST /chat/completions``; ``model`` names a dataset (or ``zhiku`` for every
    dataset the key may use). The last user message is the question, earlier user/assistant
    pairs its history."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(min_length=1, max_length=MAX_NAME_CHARS)
    messages: list[OpenAIMessage] = Field(min_length=1, max_length=MAX_MESSAGES)
    stream: bool = False
    answer: AnswerConfig | None = None


def retriever_resources(sources: list[Source], names: dict[str, str]) -> list[dict[str, Any]]:
    """Dify's ``retriever_resources``: the cited sources, ``position`` being the ``[n]`` number."""
    return [
        {
            "position": source.number,
            "dataset_id": source.dataset_id,
            "dataset_name": names.get(source.dataset_id, ""),
            "document_id": source.document_id,
            "document_name": source.document_name,
            "segment_id": source.segment_id,
            "segment_position": source.position,
            "page": source.page,
            "score": source.score,
            "content": source.text,
        }
        for source in sources
    ]


def dify_metadata(answer: Answer, names: dict[str, str]) -> dict[str, Any]:
    return {
        "usage": {"completion_tokens": answer.usage.get("answer_tokens", 0)},
        "retriever_resources": retriever_resources(answer.cited_sources, names),
        "answerer": answer.answerer,
        "plan": answer.plan.to_dict(),
        "no_answer": answer.no_answer,
        "grounded": answer.grounded,
        "timings_ms": answer.timings_ms,
    }


def dify_blocking(answer: Answer, task_id: str, created_at: int, names: dict[str, str]) -> dict[str, Any]:
    return {
        "event": "message",
        "task_id": task_id,
        "id": answer.message_id,
        "message_id": answer.message_id,
        "conversation_id": answer.conversation_id,
        "mode": "chat",
        "answer": answer.text,
        "metadata": dify_metadata(answer, names),
        "created_at": created_at,
    }


def dify_conversation(conversation: Conversation) -> dict[str, Any]:
    return {
        "id": conversation.id,
        "name": conversation.name,
        "inputs": {},
        "status": "normal",
        "introduction": "",
        "created_at": int(conversation.created_at.timestamp()),
        "updated_at": int(conversation.updated_at.timestamp()),
    }


def dify_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Dify lists a question and its answer as one message (the answer's id)."""
    out: list[dict[str, Any]] = []
    question: Message | None = None
    for message in messages:
        if message.role == "user":
            question = message
            continue
        out.append(
            {
                "id": message.id,
                "conversation_id": message.conversation_id,
                "inputs": {},
                "query": question.text if question is not None else "",
                "answer": message.text,
                "message_files": [],
                "feedback": None,
                "retriever_resources": [_stored_resource(r) for r in message.resources],
                "created_at": int(message.created_at.timestamp()),
            }
        )
        question = None
    return out


def _stored_resource(resource: dict[str, Any]) -> dict[str, Any]:
    return {
        "position": resource.get("number"),
        "dataset_id": resource.get("dataset_id"),
        "document_id": resource.get("document_id"),
        "document_name": resource.get("document_name"),
        "segment_id": resource.get("segment_id"),
        "score": resource.get("score"),
        "content": resource.get("content"),
    }


def openai_references(answer: Answer) -> list[dict[str, Any]]:
    """The cited sources for OpenAI-style clients (``index`` is the ``[n]`` number)."""
    return [
        {
            "index": source.number,
            "segment_id": source.segment_id,
            "document_id": source.document_id,
            "document_name": source.document_name,
            "dataset_id": source.dataset_id,
            "page": source.page,
            "score": source.score,
            "content": source.text,
        }
        for source in answer.cited_sources
    ]


def openai_completion(answer: Answer, completion_id: str, model: str, created: int) -> dict[str, Any]:
    references = openai_references(answer)
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": answer.text, "references": references},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": answer.usage.get("answer_tokens", 0)},
        "references": references,
        "grounded": answer.grounded,  # False: the chat model answered alone, not from the knowledge base
    }


def agent_thought(step: AgentStep, base: dict[str, Any]) -> dict[str, Any]:
    """Dify's ``agent_thought`` stream event for one search of agent mode (``base``: task id,
    message id, created_at); ``observation`` names the sources read, or why the call was not run."""
    if step.error is not None:
        observation = f"error: {step.error}"
    else:
        observation = " ".join(f"[{number}]" for number in step.found) or "no relevant passage found"
    return {
        "event": "agent_thought",
        **base,
        "id": f"{base['message_id']}-{step.number}",
        "position": step.number,
        "thought": step.thought,
        "tool": SEARCH_TOOL,
        "tool_input": json.dumps({"query": step.query}, ensure_ascii=False),
        "observation": observation,
        "message_files": [],
    }


def openai_chunk(
    completion_id: str,
    model: str,
    created: int,
    delta: dict[str, Any],
    finish_reason: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        **extra,
    }
