"""Reading the console's HTML forms into zhiku's own types, every field bounded.

A field that is missing, too long, out of range or not a choice raises :class:`FormError`
naming it; the console answers 400 with that name and message. The values are then checked
once more by the same pydantic models the HTTP API uses (``RetrievalConfig``, ``PipelineSpec``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from werkzeug.datastructures import MultiDict

from zhiku.api.plugins import plugin_names
from zhiku.api.schemas import MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, MAX_QUERY_CHARS
from zhiku.cleaners.registry import cleaners
from zhiku.core.errors import InvalidInput
from zhiku.core.metadata import OPERATORS, MetadataField, MetadataFilter, check_filter, coerce_value
from zhiku.core.retrieval_config import RetrievalConfig
from zhiku.fusion.registry import fusion_modes
from zhiku.index_processors import index_processors
from zhiku.knowledge_base.indexing.pipeline import PipelineSpec
from zhiku.splitters import splitters

SEARCH_METHODS = ("hybrid_search", "semantic_search", "full_text_search", "keyword_search")
CHANNELS = ("semantic", "full_text", "keyword")
#: Metadata conditions a hit-testing form may carry.
MAX_FILTER_ROWS = 5
MAX_SEGMENT_CHARS = 100_000
MAX_KEYWORDS = 50
#: Hits a console hit test may ask for (the API allows more; a page need not show them).
MAX_TOP_K = 100
#: What a parent is in a parent-child index: a chunk of the splitter's, or the whole document.
PARENT_MODES = ("paragraph", "full-doc")
#: The index methods a new dataset may choose (``summary``: paragraphs with a summary of each).
INDEX_METHODS = ("paragraph", "hierarchical_model", "qa_model", "summary")


class FormError(ValueError):
    """A form field the console refuses: ``field`` names it as the user knows it, ``input`` is
    the form input it came from (the same unless the page names inputs by internal ids)."""

    def __init__(
        self, field: str, message: str, *, input_name: str | None = None, **params: object
    ) -> None:
        text = message % params if params else message
        super().__init__(f"{field}: {text}")
        self.field = field
        self.message = text
        #: the English message before its values: what the page translates
        self.template = message
        self.params = params
        self.input_name = input_name or field


Form = MultiDict[str, str]


def text(form: Form, field: str, *, max_chars: int, required: bool = False, strip: bool = True) -> str:
    value = form.get(field, "")
    if strip:
        value = value.strip()
    if required and not value:
        raise FormError(field, "required")
    if len(value) > max_chars:
        raise FormError(field, "at most %(count)s characters", count=max_chars)
    return value


def integer(form: Form, field: str, *, low: int, high: int, default: int | None = None) -> int | None:
    raw = form.get(field, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise FormError(field, "a whole number") from None
    if not low <= value <= high:
        raise FormError(field, "between %(low)s and %(high)s", low=low, high=high)
    return value


def number(form: Form, field: str, *, low: float, high: float) -> float | None:
    raw = form.get(field, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        raise FormError(field, "a number") from None
    if not low <= value <= high:  # also refuses nan
        raise FormError(field, "between %(low)s and %(high)s", low=f"{low:g}", high=f"{high:g}")
    return value


def choice(form: Form, field: str, choices: Sequence[str], default: str | None = None) -> str:
    value = form.get(field, "").strip() or default
    if value is None or value not in choices:
        raise FormError(field, "one of %(choices)s", choices=", ".join(choices))
    return value


def choices(form: Form, field: str, allowed: Sequence[str]) -> list[str]:
    values = form.getlist(field)
    if len(values) > len(allowed):
        raise FormError(field, "too many values")
    for value in values:
        if value not in allowed:
            raise FormError(field, "each one of %(choices)s", choices=", ".join(allowed))
    return list(dict.fromkeys(values))


def query(form: Form) -> str:
    return text(form, "query", max_chars=MAX_QUERY_CHARS, required=True)


def name_and_description(form: Form, *, name_required: bool = True) -> tuple[str, str]:
    name = text(form, "name", max_chars=MAX_NAME_CHARS, required=name_required)
    return name, text(form, "description", max_chars=MAX_DESCRIPTION_CHARS, strip=False)


def retrieval(form: Form, base: RetrievalConfig) -> RetrievalConfig:
    """``base`` with the form's search method, channels, fusion, weights and cut-offs."""
    methods = choices(form, "hybrid_methods", CHANNELS) or list(base.hybrid_methods)
    weights = {channel: number(form, f"weight_{channel}", low=0.0, high=1.0) for channel in CHANNELS}
    threshold = number(form, "score_threshold", low=0.0, high=1.0)
    reranking: dict[str, Any] = {"mode": choice(form, "fusion", fusion_modes(), base.reranking.mode)}
    reranking["weights"] = {
        **base.reranking.weights,
        **{channel: value for channel, value in weights.items() if value is not None},
    }
    if reranking["mode"] == "reranking_model":
        model = text(form, "rerank_model", max_chars=MAX_NAME_CHARS) or base.reranking.model
        if not model:
            raise FormError("rerank_model", "name a rerank model for fusion by reranking model")
        reranking["model"] = model
    override: dict[str, Any] = {
        "search_method": choice(form, "search_method", SEARCH_METHODS, base.search_method),
        "hybrid_methods": methods,
        "top_k": integer(form, "top_k", low=1, high=MAX_TOP_K, default=min(base.top_k, MAX_TOP_K)),
        "recall_k": integer(form, "recall_k", low=1, high=1000),
        "score_threshold": threshold,
        "reranking": reranking,
        "reorder": form.get("reorder") == "on",
        "metadata_filter": None,
    }
    return _checked(lambda: base.merged(override), "retrieval")


def metadata_filter(
    form: Form, fields: Sequence[MetadataField], builtin: Sequence[str]
) -> MetadataFilter | None:
    """The conditions of the filter rows whose field is chosen (rows ``filter_<i>_*``)."""
    known = [field.name for field in fields] + list(builtin)
    conditions = []
    for row in range(MAX_FILTER_ROWS):
        field = form.get(f"filter_{row}_name", "").strip()
        if not field:
            continue
        if field not in known:
            raise FormError(f"filter_{row}_name", "one of %(choices)s", choices=", ".join(known) or "-")
        operator = choice(form, f"filter_{row}_op", OPERATORS)
        value: str | None = text(form, f"filter_{row}_value", max_chars=1000) or None
        if operator in ("empty", "not empty"):
            value = None
        condition = {"name": field, "comparison_operator": operator, "value": value}
        _check_condition(condition, row, {f.name: f for f in fields}, builtin=bool(builtin))
        conditions.append(condition)
    if not conditions:
        return None
    logical = choice(form, "logical_operator", ("and", "or"), "and")
    return _checked(
        lambda: MetadataFilter.model_validate({"logical_operator": logical, "conditions": conditions}),
        "filter",
    )


def _check_condition(
    condition: dict[str, Any], row: int, fields: dict[str, MetadataField], *, builtin: bool
) -> None:
    """One filter row checked as the search will check it, refused with the row's own input
    (operator or value) and the field's name rather than the API's path to the condition."""
    one = MetadataFilter.model_validate({"conditions": [condition]})
    try:
        check_filter(one, fields, builtin=builtin)
    except InvalidInput as exc:
        where, _, message = str(exc).partition(": ")
        part = "op" if where.endswith("comparison_operator") else "value"
        message = next((plain for found, plain in FILTER_MESSAGES if found in message), message)
        raise FormError(condition["name"], message, input_name=f"filter_{row}_{part}") from None


#: The search's refusals of a filter row (words found in them), said as the console says them.
FILTER_MESSAGES = (
    ("does not apply to", "this operator does not apply to this field"),
    ("needs", "this operator needs a value"),
    ("takes one value", "this operator takes one value"),
    ("ISO 8601", "a date such as 2025-01-31"),
    ("expected a number", "a number"),
    ("expected a finite number", "a number"),
)


def process_rule(form: Form, base: PipelineSpec) -> PipelineSpec:
    """``base`` with the form's cleaners, splitter, token sizes, ``doc_form``, summary index and,
    for a parent-child index, its parent mode and how each parent is cut into children."""
    data = base.model_dump()
    data["cleaners"] = choices(form, "cleaners", plugin_names(cleaners))
    data["splitter"] = choice(form, "splitter", plugin_names(splitters), base.splitter)
    data["doc_form"] = choice(form, "doc_form", plugin_names(index_processors), base.doc_form)
    data["max_tokens"] = integer(form, "max_tokens", low=16, high=8192, default=base.max_tokens)
    data["chunk_overlap"] = integer(form, "chunk_overlap", low=0, high=4096, default=base.chunk_overlap)
    data["separator"] = _separator(form, "separator", base.separator)
    data["summary"] = "llm" if form.get("summary") == "on" else "off"
    data["parent_mode"] = choice(form, "parent_mode", PARENT_MODES, base.parent_mode)
    data["child_max_tokens"] = integer(
        form, "child_max_tokens", low=16, high=8192, default=base.child_max_tokens
    )
    # a child separator cuts at it (as Dify's subchunk separator does); none: cut automatically
    child_separator = _separator(form, "child_separator", "")
    data["child_splitter"] = "fixed_separator" if child_separator else "recursive"
    data["child_separator"] = child_separator or base.child_separator
    return _checked(lambda: PipelineSpec.model_validate(data), "process_rule")


def index_method(form: Form) -> PipelineSpec:
    """The process rule of a new dataset of the index method chosen (the summary index is
    paragraphs with a summary of each)."""
    method = choice(form, "index_method", INDEX_METHODS, "paragraph")
    if method == "summary":
        return PipelineSpec(summary="llm")
    return PipelineSpec(doc_form=method)


def _separator(form: Form, field: str, default: str) -> str:
    """A separator as typed, ``\\n`` and ``\\t`` read as a line break and a tab."""
    separator = text(form, field, max_chars=32, strip=False)
    return separator.replace("\\n", "\n").replace("\\t", "\t") if separator else default


def keywords(form: Form) -> list[str]:
    raw = text(form, "keywords", max_chars=MAX_KEYWORDS * MAX_NAME_CHARS)
    words = [word.strip() for word in raw.replace("，", ",").replace("\n", ",").split(",")]
    words = list(dict.fromkeys(word for word in words if word))
    if len(words) > MAX_KEYWORDS:
        raise FormError("keywords", f"at most {MAX_KEYWORDS}")
    if any(len(word) > MAX_NAME_CHARS for word in words):
        raise FormError("keywords", f"each at most {MAX_NAME_CHARS} characters")
    return words


def metadata_values(form: Form, fields: Sequence[MetadataField]) -> dict[str, Any]:
    """A document's values by field id, from inputs ``meta_<field id>`` (empty: no value)."""
    values: dict[str, Any] = {}
    for field in fields:
        name = f"meta_{field.id}"
        try:
            raw = text(form, name, max_chars=1000)
            if raw and field.type == "number":
                values[field.id] = number(form, name, low=-1e18, high=1e18)
            elif raw and field.type == "time":
                values[field.id] = coerce_value("time", raw)
            elif raw:
                values[field.id] = raw
        except FormError as exc:
            raise FormError(field.name, exc.message, input_name=name) from None
        except ValueError as exc:  # a time that is neither Unix seconds nor an ISO 8601 date
            raise FormError(field.name, str(exc), input_name=name) from None
    return values


def _checked(build: Any, field: str) -> Any:
    try:
        return build()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or field
        raise FormError(where, str(first.get("msg", "invalid"))) from None
