"""What the LLM routers share: the 0/1-dataset shortcuts, the fallback and name matching."""

from __future__ import annotations

from collections.abc import Callable

from zhiku.core.errors import ModelUnavailable
from zhiku.retrieval.types import DatasetProfile, RouteDecision, Router

#: Descriptions are cut to this length in prompts and tool specs (many servers limit a tool's).
DESCRIPTION_CHARS = 1000


def describe(profile: DatasetProfile) -> str:
    return (profile.description.strip() or f"dataset {profile.name}")[:DESCRIPTION_CHARS]


def match_dataset(answer: str, profiles: list[DatasetProfile]) -> DatasetProfile | None:
    """The profile an LLM named, by id or (case-insensitive) by name; None when it named none."""
    wanted = answer.strip().strip("`'\"").strip()
    for profile in profiles:
        if wanted == profile.id:
            return profile
    for profile in profiles:
        if wanted.casefold() == profile.name.casefold():
            return profile
    return None


def route_with_llm(
    name: str,
    query: str,
    profiles: list[DatasetProfile],
    ask: Callable[[], DatasetProfile | None],
    fallback: Router,
) -> RouteDecision:
    """Run an LLM router's ``ask``, falling back to ``fallback`` — never raising — when the model
    is unreachable or names no valid dataset. 0 datasets → none; 1 → that one, without a call."""
    if not profiles:
        return RouteDecision(None, name, note="no dataset to route to")
    if len(profiles) == 1:
        return RouteDecision(profiles[0].id, name)
    try:
        chosen = ask()
    except ModelUnavailable as exc:
        reason = f"the {name} router's model failed ({exc})"
    else:
        if chosen is not None:
            return RouteDecision(chosen.id, name)
        reason = f"the {name} router's model named no valid dataset"
    decision = fallback.choose(query, profiles)
    return RouteDecision(
        decision.dataset_id,
        name,
        note=f"{reason}; the {fallback.name} router chose instead",
        scores=decision.scores,
    )
