"""Automatic metadata filtering: the chat model turns a question into conditions over a dataset's
fields ("2024 年的报销制度" → ``year = 2024``), which are then pushed down like manual ones.

The model is offered one tool, ``filter_documents``, whose schema lists the dataset's fields and
the operators; it calls it when the question names something the fields can test, and answers
in text otherwise (no filter). Each condition it writes is checked like a caller's
(:func:`~zhiku.core.metadata.check_filter`); one that does not check is dropped and noted,
the others kept. A model failure means no filter, never a failed search: a filter guessed from
a question may only narrow the search when the model says so.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from zhiku.core.errors import InvalidInput, ZhikuError
from zhiku.core.metadata import (
    BUILTIN_FIELDS,
    OPERATORS,
    MetadataField,
    MetadataFilter,
    check_filter,
)
from zhiku.providers.llm import ChatModel, Tool

logger = logging.getLogger(__name__)

TOOL_NAME = "filter_documents"
MAX_TOKENS = 300
SYSTEM_PROMPT = (
    "You choose which documents a knowledge-base search may look at. When the question names a "
    "value that the documents' metadata fields can test (a year, a category, a product, a date), "
    f"call {TOOL_NAME} with those conditions. Use only the listed fields and operators; time "
    "values are ISO 8601 dates. When the question names no such value, answer with the word none "
    "and call nothing. 当问题提到元数据字段可以检验的值时调用工具，否则回答 none。"
)


@dataclass(frozen=True)
class AutomaticFilterResult:
    """The filter the model wrote (None: search everything) and what was dropped, and why."""

    metadata_filter: MetadataFilter | None
    notes: list[str] = field(default_factory=list)


def automatic_filter(
    chat: ChatModel, question: str, fields: Sequence[MetadataField], *, builtin: bool
) -> AutomaticFilterResult:
    """Ask ``chat`` for conditions on ``fields`` (and the built-ins when ``builtin``)."""
    known: dict[str, str] = {f.name: f.type for f in fields}
    if builtin:
        known.update(BUILTIN_FIELDS)
    if not known:
        return AutomaticFilterResult(None, ["no metadata fields to filter on"])
    try:
        result = chat.chat(
            [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}],
            tools=[_tool(known)],
            tool_choice="auto",
            max_tokens=MAX_TOKENS,
        )
    except ZhikuError as exc:
        logger.warning("automatic metadata filter: chat model failed; searching unfiltered: %s", exc)
        return AutomaticFilterResult(None, [f"chat model failed, no filter: {exc}"])
    calls = [call for call in result.tool_calls if call.name == TOOL_NAME]
    if not calls:
        return AutomaticFilterResult(None, ["the model set no filter"])
    return _checked(calls[0].arguments, {f.name: f for f in fields}, builtin)


def _tool(known: dict[str, str]) -> Tool:
    described = "; ".join(f"{name} ({kind})" for name, kind in sorted(known.items()))
    return Tool(
        name=TOOL_NAME,
        description=f"Keep only documents whose metadata pass these conditions. Fields: {described}.",
        parameters={
            "type": "object",
            "properties": {
                "logical_operator": {"type": "string", "enum": ["and", "or"]},
                "conditions": {
                    "type": "array",
                    "maxItems": 10,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "enum": sorted(known)},
                            "comparison_operator": {"type": "string", "enum": list(OPERATORS)},
                            "value": {"type": ["string", "number", "array"]},
                        },
                        "required": ["name", "comparison_operator"],
                    },
                },
            },
            "required": ["conditions"],
        },
    )


def _checked(
    arguments: dict[str, Any], fields: dict[str, MetadataField], builtin: bool
) -> AutomaticFilterResult:
    """The conditions of the model's call that check; a malformed call is no filter."""
    operator = arguments.get("logical_operator", "and")
    candidates = arguments.get("conditions")
    if not isinstance(candidates, list) or not candidates:
        return AutomaticFilterResult(None, ["the model's call held no conditions; no filter"])
    notes: list[str] = []
    kept = []
    for candidate in candidates[:10]:
        try:
            one = MetadataFilter.model_validate({"conditions": [candidate]})
            check_filter(one, fields, builtin=builtin)
        except (InvalidInput, ValueError) as exc:
            notes.append(f"dropped {str(candidate)[:120]}: {str(exc)[:200]}")
            continue
        kept.append(one.conditions[0])
    if not kept:
        return AutomaticFilterResult(None, [*notes, "no usable condition; no filter"])
    logical = operator if operator in ("and", "or") else "and"
    return AutomaticFilterResult(MetadataFilter(logical_operator=logical, conditions=kept), notes)
