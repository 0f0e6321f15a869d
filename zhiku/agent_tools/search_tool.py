"""``kb_search``: knowledge search as an agent tool — scored snippets within a text budget.

An agent does better with a few passages it can read whole than with documents stuffed into its
prompt, so the tool returns at most ``max_chars`` of text in total, each snippet cut at a sentence
boundary, nothing scoring under ``min_score``. The arguments are one pydantic model
(:class:`KbSearchArgs`): it validates calls from every caller (Python, HTTP, MCP) and is the JSON
schema given to a model for tool calling (:data:`KB_SEARCH_TOOL`), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from zhiku.answers.sentences import split_sentences
from zhiku.answers.sources import hit_text
from zhiku.core.documents import Hit

#: A snippet shorter than this is not worth its place: the tool stops rather than return it.
MIN_SNIPPET_CHARS = 40
ELLIPSIS = "…"

#: ``search(query, datasets, top_k)``: the hits of a retrieval, best first.
Search = Callable[[str, Sequence[str] | None, int], list[Hit]]


class KbSearchArgs(BaseModel):
    """The arguments of ``kb_search``; their descriptions are what a model reads."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1, max_length=2000, description="What to look for, in the user's language."
    )
    datasets: list[Annotated[str, Field(max_length=255)]] | None = Field(
        default=None,
        max_length=50,
        description="Dataset names or ids to search; omit to search every dataset.",
    )
    top_k: int = Field(default=5, ge=1, le=50, description="At most this many snippets.")
    min_score: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description=(
            "Leave out snippets whose relevance (the estimated probability, 0 to 1, that a snippet is "
            "relevant) is below this; each dataset's own threshold applies too. No snippet means the "
            "knowledge base has nothing on the query."
        ),
    )
    max_chars: int = Field(
        default=2000,
        ge=MIN_SNIPPET_CHARS,
        le=50_000,
        description="The snippets' text never exceeds this many characters in total.",
    )


#: The tool in OpenAI's tool-calling format (``tools=[KB_SEARCH_TOOL]``).
KB_SEARCH_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "kb_search",
        "description": (
            "Search the knowledge base. Returns passages (text, document, position) to answer from "
            "and cite, each with its relevance (0 to 1) and the raw score of each search method; an "
            "empty list means nothing relevant was found."
        ),
        "parameters": KbSearchArgs.model_json_schema(),
    },
}


class Snippet(BaseModel):
    text: str
    score: float = Field(description="relevance: the estimated probability (0 to 1) that it is relevant")
    scores: dict[str, float]
    document_name: str
    document_id: str
    dataset_id: str
    segment_id: str
    position: int = Field(description="1-based, as the API numbers segments")
    page: int | None
    truncated: bool = Field(description="the segment holds more text than the snippet")


class SearchResult(BaseModel):
    query: str
    snippets: list[Snippet] = []
    total_chars: int = 0
    below_min_score: int = Field(default=0, description="hits left out by min_score")
    over_budget: int = Field(default=0, description="hits left out because max_chars was spent")


def kb_search(search: Search, args: KbSearchArgs) -> SearchResult:
    """Run ``args`` through ``search`` and fit the hits to the budget, best first."""
    hits = search(args.query, args.datasets, args.top_k)
    result = SearchResult(query=args.query)
    budget = args.max_chars
    for hit in hits[: args.top_k]:
        if hit.score < args.min_score:
            result.below_min_score += 1
            continue
        text = hit_text(hit).strip()
        piece = text if len(text) <= budget else cut_at_sentence(text, budget)
        if not piece:
            result.over_budget += 1
            continue
        budget -= len(piece)
        result.total_chars += len(piece)
        page = hit.metadata.get("page")
        result.snippets.append(
            Snippet(
                text=piece,
                score=round(hit.score, 6),
                scores={k: round(v, 6) for k, v in hit.scores.items()},
                document_name=hit.document_name,
                document_id=hit.document_id,
                dataset_id=hit.dataset_id,
                segment_id=hit.segment_id,
                position=hit.position + 1,
                page=page if isinstance(page, int) else None,
                truncated=piece != text,
            )
        )
    return result


def cut_at_sentence(text: str, budget: int) -> str:
    """The longest run of whole leading sentences of ``text`` within ``budget`` characters, with
    ``…``; a first sentence longer than the budget is cut mid-sentence. Empty when the budget is
    under :data:`MIN_SNIPPET_CHARS`."""
    if budget < MIN_SNIPPET_CHARS:
        return ""
    room = budget - len(ELLIPSIS)
    end = 0
    for sentence in split_sentences(text):
        if sentence.end > room:
            break
        end = sentence.end
    if end == 0:
        end = room
    return text[:end].rstrip() + ELLIPSIS
