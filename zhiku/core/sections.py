"""Sections: a segment's heading path as one string, and the paths a restriction to it matches.

Extractors give a document's ``headings`` (outermost first); a segment's ``section`` is that path
joined with :data:`SEPARATOR` (``"Handbook > Leave > Annual leave"``). Restricting a search to a
section keeps it and every section under it, compared step by step: ``"Handbook > Leave"``
matches ``"Handbook > Leave > Annual leave"`` but not ``"Handbook > Leaves"``. Stores match this
exactly through :func:`ancestors`: a point lists every prefix of its path, so a restriction is
one equality test on that list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any

from pydantic import AfterValidator

from zhiku.core.errors import InvalidInput

SEPARATOR = " > "
#: The segment metadata key holding the path.
SECTION_KEY = "section"
#: Longest section path accepted in a restriction or a description (characters).
MAX_SECTION_CHARS = 2000


def section_path(headings: Sequence[Any] | None) -> str | None:
    """The headings joined into a path; None without any non-blank heading."""
    steps = [_step(h) for h in headings or ()]
    steps = [s for s in steps if s]
    return SEPARATOR.join(steps) if steps else None


def section_of(metadata: Mapping[str, Any]) -> str | None:
    """The section of a segment or chunk, from its metadata (None when it has none)."""
    value = metadata.get(SECTION_KEY)
    return value if isinstance(value, str) and value else None


def ancestors(section: str) -> list[str]:
    """The path and every path above it, outermost first: what a store point lists."""
    steps = section.split(SEPARATOR)
    return [SEPARATOR.join(steps[: n + 1]) for n in range(len(steps))]


def within(section: str | None, restriction: str) -> bool:
    """True when ``section`` is ``restriction`` or a section under it."""
    return section is not None and restriction in ancestors(section)


def narrower(a: str, b: str) -> str | None:
    """The restriction both ``a`` and ``b`` admit: the deeper of the two when one is within the
    other, else None (no section is within both)."""
    if within(a, b):
        return a
    if within(b, a):
        return b
    return None


def normalize_section(value: Any, field: str = "section") -> str:
    """A restriction or a section name as given by a caller: its steps stripped and re-joined.
    InvalidInput names ``field`` when it is not a non-empty string of at most
    :data:`MAX_SECTION_CHARS` characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{field}: must be a string")
    if len(value) > MAX_SECTION_CHARS:
        raise InvalidInput(f"{field}: at most {MAX_SECTION_CHARS} characters")
    path = section_path(value.split(SEPARATOR.strip()))
    if path is None:
        raise InvalidInput(f"{field}: must name a section (a heading path such as 'Guide > Install')")
    return path


def _step(heading: Any) -> str:
    return " ".join(str(heading).split()).replace(SEPARATOR.strip(), "/")


def _checked_path(value: str) -> str:
    """``normalize_section`` for a pydantic field (its error as the ValueError pydantic reports)."""
    try:
        return normalize_section(value)
    except InvalidInput as exc:
        raise ValueError(str(exc).removeprefix("section: ")) from None


#: A model field holding a section path, normalised on validation.
SectionPath = Annotated[str, AfterValidator(_checked_path)]
