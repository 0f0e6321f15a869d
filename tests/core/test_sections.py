"""Section paths: joined headings, whole-step prefixes, and scopes that carry a section."""

from __future__ import annotations

import pytest

from zhiku.core.errors import InvalidInput
from zhiku.core.scope import DocumentScope
from zhiku.core.sections import ancestors, narrower, normalize_section, section_path, within


def test_headings_join_into_a_path() -> None:
    assert section_path(["Handbook", " Leave  policy ", "Annual"]) == "Handbook > Leave policy > Annual"
    assert section_path(["Costs > benefits"]) == "Costs / benefits"  # a heading stays one step
    assert section_path(["", "  "]) is None
    assert section_path(None) is None


def test_a_restriction_admits_its_path_and_the_paths_under_it() -> None:
    assert ancestors("A > B > C") == ["A", "A > B", "A > B > C"]
    assert within("A > B > C", "A > B") and within("A > B", "A > B")
    assert not within("A > Bc", "A > B") and not within(None, "A") and not within("A", "A > B")
    assert narrower("A", "A > B") == narrower("A > B", "A") == "A > B"
    assert narrower("A > B", "A > C") is None


def test_normalize_section() -> None:
    assert normalize_section(" Guide>Install > Linux ") == "Guide > Install > Linux"
    for bad in ("", ">", 3, "x" * 3000):
        with pytest.raises(InvalidInput, match="^section"):
            normalize_section(bad)


def test_scopes_with_sections_intersect() -> None:
    docs = DocumentScope(frozenset({"d1", "d2"}))
    both = docs.intersect(DocumentScope.of_section("A > B"))
    assert both == DocumentScope(frozenset({"d1", "d2"}), section="A > B")
    assert both.admits("d1", "A > B > C") and not both.admits("d1", "A") and not both.admits("d3", "A > B")
    deeper = DocumentScope.of_section("A").intersect(DocumentScope.of_section("A > B"))
    assert deeper.section == "A > B" and deeper.all_documents
    assert DocumentScope.of_section("A").intersect(DocumentScope.of_section("B")).empty
