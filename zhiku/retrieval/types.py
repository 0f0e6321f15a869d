"""Values shared by the routers, the multi-path merge and their callers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol

from zhiku.core.documents import Hit

Routing = Literal["single", "multiple"]


@dataclass(frozen=True)
class DatasetProfile:
    """What a router knows of a dataset: its description and a sample of its segments.

    ``version`` changes whenever the sample could (segment count, description), so cached
    profile vectors are rebuilt only then.
    """

    id: str
    name: str
    description: str
    sample: tuple[str, ...] = ()
    version: str = ""


@dataclass(frozen=True)
class RouteDecision:
    """The dataset a router picked (``None``: no dataset), and why when it fell back.

    ``scores`` holds the router's score per dataset id where it has them (the embedding router).
    """

    dataset_id: str | None
    router: str
    note: str | None = None
    scores: dict[str, float] = field(default_factory=dict)


@dataclass
class RetrievalResult:
    """Hits from one or many datasets, and how they were chosen.

    ``datasets`` are the ids searched; ``router`` names the router of ``single`` routing;
    ``note`` explains a fallback (an LLM that named no valid dataset, an unreachable endpoint).
    """

    hits: list[Hit]
    datasets: list[str]
    routing: Routing
    router: str | None = None
    note: str | None = None


class Router(Protocol):
    """Picks the one dataset whose profile fits the query best (N-choose-1)."""

    name: str

    def choose(self, query: str, profiles: list[DatasetProfile]) -> RouteDecision: ...
