"""Bounds of every request. A request past one is answered 400 ``invalid_param`` naming the field,
before any work: the cost of a request is bounded by its size, never by what it asks for."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

MAX_JSON_DEPTH = 32  # nesting of objects and arrays in a JSON body or form ``data``
MAX_JSON_ITEMS = 10_000  # members of one object or array
MAX_NAME_CHARS = 255  # names, ids, keywords, users
MAX_TEXT_CHARS = 20_000_000  # a document's text (the body is bounded by upload_max_mb as well)
MAX_SEGMENT_CHARS = 100_000  # a segment's content or answer
MAX_DESCRIPTION_CHARS = 10_000
MAX_QUERY_CHARS = 4000  # a search query: what to look for, not a document
#: a question to answer (Dify's chat ``query``, a Dify external knowledge query): it may carry
#: some context of its own. Embedding models read only what fits their input, so a longer one
#: would cost more everywhere else (tokenizing, keywords, a chat model's prompt) for nothing.
MAX_QUESTION_CHARS = 8000
#: one message of an OpenAI-style conversation (all its text parts together) or one Dify input
#: value: a system prompt or an earlier answer quoted may be longer than a question
MAX_MESSAGE_CHARS = 16_000
MAX_DATASETS_PER_QUERY = 100  # dataset ids or names in one retrieval
MAX_KEYWORDS = 100  # keywords of one segment
MAX_LIST_ITEMS = 1000  # ids of one bulk status change

Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]


def unsafe_input(payload: Any, max_depth: int = MAX_JSON_DEPTH) -> tuple[str, str] | None:
    """The first problem of a decoded request (``(field path, reason)``), or None: nesting deeper
    than ``max_depth``, an object or array of more than :data:`MAX_JSON_ITEMS` members, a string
    (value or key) holding a NUL or a lone surrogate — text no store and no JSON encoder can hold.
    Iterative, so a body nested 50,000 deep costs a loop, not the stack."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(payload, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            reason = _text_problem(value)
            if reason:
                return _dotted(path), reason
        elif isinstance(value, dict | list):
            if len(path) >= max_depth:
                return _dotted(path), f"nested deeper than {max_depth} levels"
            if len(value) > MAX_JSON_ITEMS:
                return _dotted(path), f"more than {MAX_JSON_ITEMS} members"
            if isinstance(value, dict):
                for key, item in value.items():
                    reason = _text_problem(key) if isinstance(key, str) else None
                    if reason:
                        return _dotted(path), f"a field name {reason}"
                    stack.append((item, (*path, key)))
            else:
                stack.extend((item, (*path, index)) for index, item in enumerate(value))
    return None


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not valid Unicode text (lone surrogate at {exc.start})"
    return None


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(part)[:80] for part in path) or "body"
