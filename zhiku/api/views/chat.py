"""Answers over HTTP: Dify's chat-messages, conversations and messages; OpenAI's chat completions
and the models they may name.

Streaming answers are server-sent events. The sources are fixed before the first text event, so
a streamed ``[n]`` already means the source the final event lists, and the streamed markers are
checked against them as they go (one naming no source is never sent, not even split across
model deltas); when citation repair changes the text, Dify clients get a ``message_replace``
event with the final text, OpenAI clients the final text in the last chunk's ``content_final``
(the references travel only in that chunk).
"""

from __future__ import annotations

import functools
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from flask import Response, jsonify, request, stream_with_context

from zhiku.answers.citations import checked_events
from zhiku.answers.memory import Turn
from zhiku.answers.types import Answer, AnswerEvent
from zhiku.api.auth import principal
from zhiku.api.chat_shapes import (
    ChatCompletionBody,
    ChatMessageBody,
    ConversationListQuery,
    MessageListQuery,
    RenameBody,
    UserBody,
    agent_thought,
    dify_blocking,
    dify_conversation,
    dify_messages,
    dify_metadata,
    openai_chunk,
    openai_completion,
    openai_references,
)
from zhiku.api.client_gone import DISCONNECTED_KEY, until_client_leaves
from zhiku.api.context import context, visible_dataset
from zhiku.api.dify import seconds
from zhiku.api.errors import STATUS_OF_CODE, ApiError
from zhiku.api.routing import Routes
from zhiku.core.errors import ZhikuError
from zhiku.knowledge_base.catalog import DatasetSummary

routes = Routes("answers")
logger = logging.getLogger(__name__)

#: ``model`` of an OpenAI-style request that asks every dataset the key may use.
ALL_DATASETS_MODEL = "zhiku"
#: Datasets read per query when listing models.
_MODELS_PAGE = 500


def answer_datasets(names: Sequence[str] | None) -> list[str] | None:
    """The dataset ids to answer from: those named (each visible to the key), else every dataset
    the key may use (None: all, for an unscoped key)."""
    if names is not None:
        # once each, whether named twice or by name and by id
        return list(dict.fromkeys(visible_dataset(name).id for name in dict.fromkeys(names)))
    allowed = principal().datasets
    if allowed is None:
        return None
    return [summary.id for summary in context().catalog.datasets(sorted(allowed))]


def _names(answer: Answer) -> dict[str, str]:
    """Names of the datasets the answer's sources come from."""
    ids = sorted({source.dataset_id for source in answer.sources})
    return {summary.id: summary.name for summary in context().catalog.datasets(ids)}


def _sse(payload: dict[str, Any] | str) -> str:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n"


def event_stream(events: Iterator[str]) -> Response:
    """``events`` as server-sent events, stopped when the client leaves (see :mod:`client_gone`)."""
    watched = until_client_leaves(events, request.environ.get(DISCONNECTED_KEY))
    response = Response(stream_with_context(watched), mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # a proxy in front must not hold events back
    return response


def _error_event(exc: Exception) -> dict[str, Any]:
    """A failure after the stream started: the status it would have had, as an event."""
    if isinstance(exc, ZhikuError):
        status = STATUS_OF_CODE.get(exc.code, 400)
        return {"event": "error", "status": status, "code": exc.code, "message": str(exc)}
    logger.exception("answer stream failed", exc_info=exc)
    return {"event": "error", "status": 500, "code": "internal_error", "message": "internal error"}


# -- Dify: chat-messages ---------------------------------------------------------------------


@routes.route(
    "POST",
    "/chat-messages",
    summary="Ask a question: a cited answer from the knowledge base (blocking or streamed as SSE)",
    body=ChatMessageBody,
)
def chat_messages(body: ChatMessageBody) -> Response:
    kb = context().kb
    datasets = answer_datasets(body.datasets)
    conversation_id = body.conversation_id or None
    task_id, message_id, created = str(uuid.uuid4()), str(uuid.uuid4()), int(time.time())
    owner = principal().key_id
    options: dict[str, Any] = {
        "datasets": datasets,
        "conversation_id": conversation_id,
        "config": body.answer,
        "user": body.user,
        "owner": owner,
        "message_id": message_id,
    }
    if body.response_mode == "blocking":
        answer = kb.ask(body.query, **options)
        assert isinstance(answer, Answer)
        return jsonify(dify_blocking(answer, task_id, created, _names(answer)))
    unanswered = None
    if conversation_id is None:  # every event names the conversation: make it before the first one
        conversation_id = kb.conversations.create(body.query, user=body.user, owner=owner).id
        options["conversation_id"] = conversation_id
        unanswered = functools.partial(_discard_if_empty, conversation_id, owner)
    try:
        events = kb.ask(body.query, stream=True, **options)  # errors before the stream are answered as JSON
    except Exception:
        if unanswered is not None:
            unanswered()
        raise
    assert not isinstance(events, Answer)
    return event_stream(
        dify_events(events, task_id, message_id, created, conversation_id, unanswered=unanswered)
    )


def dify_events(
    events: Iterator[AnswerEvent],
    task_id: str,
    message_id: str,
    created: int,
    conversation_id: str | None = None,
    *,
    unanswered: Callable[[], None] | None = None,
) -> Iterator[str]:
    """Dify's stream events. ``conversation_id``, when known before the answer, is on every event
    (else it comes with the last); ``unanswered`` runs when the stream ends without an answer (the
    model failed, the client left)."""
    base = {"task_id": task_id, "message_id": message_id, "created_at": created}
    written: list[str] = []
    answered = False
    try:
        for event in checked_events(events):
            if event.kind == "step" and event.step is not None:
                yield _sse({**agent_thought(event.step, base), "conversation_id": conversation_id})
            elif event.kind == "delta":
                written.append(event.delta)
                yield _sse(
                    {"event": "message", **base, "conversation_id": conversation_id, "answer": event.delta}
                )
            elif event.answer is not None:
                answer, answered = event.answer, True
                conversation_id = answer.conversation_id or conversation_id
                if answer.text != "".join(written):
                    replace = {"event": "message_replace", **base, "conversation_id": conversation_id}
                    yield _sse({**replace, "answer": answer.text})
                end = {"event": "message_end", **base, "id": message_id, "conversation_id": conversation_id}
                yield _sse({**end, "metadata": dify_metadata(answer, _names(answer))})
    except Exception as exc:  # the status line is sent: report in the stream
        yield _sse({**_error_event(exc), **base, "conversation_id": conversation_id})
    finally:
        if not answered and unanswered is not None:
            unanswered()


def _discard_if_empty(conversation_id: str, owner: str | None) -> None:
    """Delete a conversation made for a streamed answer that never came, so a failed question
    leaves no empty conversation behind."""
    store = context().kb.conversations
    try:
        if not store.messages(conversation_id, owner=owner, limit=1):
            store.delete(conversation_id, owner=owner)
    except Exception:  # clean-up only: the answer's own error is the one reported
        logger.exception("could not delete the unanswered conversation %s", conversation_id)


# -- Dify: conversations and messages ----------------------------------------------------------


@routes.route(
    "GET", "/conversations", summary="The caller's conversations, newest first", query=ConversationListQuery
)
def list_conversations(query: ConversationListQuery) -> Response:
    store = context().kb.conversations
    page = store.recent(
        user=query.user, owner=principal().key_id, limit=query.limit + 1, before=query.last_id
    )
    return jsonify(
        {
            "limit": query.limit,
            "has_more": len(page) > query.limit,
            "data": [dify_conversation(c) for c in page[: query.limit]],
        }
    )


@routes.route(
    "POST", "/conversations/{conversation_id}/name", summary="Rename a conversation", body=RenameBody
)
def rename_conversation(conversation_id: str, body: RenameBody) -> Response:
    store = context().kb.conversations
    renamed = store.rename(conversation_id, body.name, user=body.user, owner=principal().key_id)
    return jsonify(dify_conversation(renamed))


@routes.route(
    "DELETE",
    "/conversations/{conversation_id}",
    summary="Delete a conversation and its messages",
    body=UserBody,
)
def delete_conversation(conversation_id: str, body: UserBody) -> Response:
    context().kb.conversations.delete(conversation_id, user=body.user, owner=principal().key_id)
    return jsonify({"result": "success"})


@routes.route("GET", "/messages", summary="A conversation's messages, oldest first", query=MessageListQuery)
def list_messages(query: MessageListQuery) -> Response:
    store = context().kb.conversations
    messages = store.messages(
        query.conversation_id, user=query.user, owner=principal().key_id, limit=2 * query.limit + 1
    )
    pairs = dify_messages(messages)
    return jsonify(
        {"limit": query.limit, "has_more": len(pairs) > query.limit, "data": pairs[-query.limit :]}
    )


# -- OpenAI: chat completions ------------------------------------------------------------------


@routes.route(
    "POST",
    "/chat/completions",
    summary="OpenAI-compatible answers: model names a dataset ('zhiku': all); references beside the text",
    body=ChatCompletionBody,
)
def chat_completions(body: ChatCompletionBody) -> Response:
    question, history = _question_and_history(body)
    datasets = answer_datasets(None if body.model == ALL_DATASETS_MODEL else [body.model])
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    options: dict[str, Any] = {
        "datasets": datasets,
        "config": body.answer,
        "remember": False,
        "history": history,
        "owner": principal().key_id,
    }
    kb = context().kb
    if not body.stream:
        answer = kb.ask(question, **options)
        assert isinstance(answer, Answer)
        return jsonify(openai_completion(answer, completion_id, body.model, created))
    events = kb.ask(question, stream=True, **options)
    assert not isinstance(events, Answer)
    return event_stream(_openai_events(events, completion_id, body.model, created))


def _question_and_history(body: ChatCompletionBody) -> tuple[str, list[Turn]]:
    talk = [m for m in body.messages if m.role in ("user", "assistant")]
    if not talk or talk[-1].role != "user" or not talk[-1].text().strip():
        raise ApiError(400, "invalid_param", "messages: the last message must be a user message with text")
    turns: list[Turn] = []
    pending: str | None = None
    for message in talk[:-1]:
        if message.role == "user":
            pending = message.text()
        elif pending is not None:
            turns.append(Turn(pending, message.text()))
            pending = None
    return talk[-1].text(), turns


def _openai_events(
    events: Iterator[AnswerEvent], completion_id: str, model: str, created: int
) -> Iterator[str]:
    written: list[str] = []
    try:
        yield _sse(openai_chunk(completion_id, model, created, {"role": "assistant", "content": ""}))
        for event in checked_events(events):
            if event.kind == "step" and event.step is not None:  # agent mode: a search, before any text
                step = event.step.to_dict()
                yield _sse(openai_chunk(completion_id, model, created, {}, agent_step=step))
            elif event.kind == "delta":
                written.append(event.delta)
                yield _sse(openai_chunk(completion_id, model, created, {"content": event.delta}))
            elif event.answer is not None:
                answer = event.answer
                extra: dict[str, Any] = {"references": openai_references(answer)}
                if answer.text != "".join(written):
                    extra["content_final"] = answer.text
                yield _sse(openai_chunk(completion_id, model, created, {}, "stop", **extra))
    except Exception as exc:
        yield _sse({"error": _error_event(exc)})
    yield _sse("[DONE]")


# -- OpenAI: models ----------------------------------------------------------------------------


@routes.route(
    "GET",
    "/models",
    summary="OpenAI-compatible model list: 'zhiku' (every dataset the key may use) and one per dataset",
)
def list_models() -> Response:
    datasets = _visible_datasets()
    models = [_all_datasets_model(datasets)]
    models += [_model(_model_id(summary), _created(summary)) for summary in datasets]
    return jsonify({"object": "list", "data": models})


@routes.route(
    "GET",
    "/models/{model_id}",
    summary="One model: 'zhiku', or a dataset's name or id (as chat completions take it)",
)
def get_model(model_id: str) -> Response:
    if model_id == ALL_DATASETS_MODEL:
        return jsonify(_all_datasets_model(_visible_datasets()))
    (summary,) = context().catalog.datasets([visible_dataset(model_id).id])  # 404 beyond the key's scope
    return jsonify(_model(model_id, _created(summary)))


def _visible_datasets() -> list[DatasetSummary]:
    """Every dataset the key may use, newest first (as ``GET /datasets`` lists them)."""
    catalog, ids = context().catalog, list[str]()
    while True:
        page, total = catalog.dataset_ids(offset=len(ids), limit=_MODELS_PAGE, within=principal().datasets)
        ids += page
        if not page or len(ids) >= total:
            return catalog.datasets(ids)


def _model_id(summary: DatasetSummary) -> str:
    """The ``model`` that asks this dataset: its name, or its id when the name means all datasets."""
    return summary.id if summary.name == ALL_DATASETS_MODEL else summary.name


def _model(model_id: str, created: int) -> dict[str, Any]:
    return {"id": model_id, "object": "model", "created": created, "owned_by": "zhiku"}


def _created(summary: DatasetSummary) -> int:
    return seconds(summary.created_at) or 0


def _all_datasets_model(datasets: Sequence[DatasetSummary]) -> dict[str, Any]:
    """``zhiku`` dates from the oldest dataset it answers from (0 when there is none)."""
    return _model(ALL_DATASETS_MODEL, min(map(_created, datasets), default=0))
