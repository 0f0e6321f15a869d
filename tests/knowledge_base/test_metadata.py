"""Metadata fields, document values and filters pushed into every search channel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from zhiku import KnowledgeBase
from zhiku.core.errors import AlreadyExists, InvalidInput
from zhiku.knowledge_base.dataset import Dataset

CHANNELS = ["semantic_search", "full_text_search", "keyword_search", "hybrid_search"]


@pytest.fixture(scope="module")
def shelf_kb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KnowledgeBase]:
    knowledge_base = KnowledgeBase.open(tmp_path_factory.mktemp("shelf") / "home", embedding_model="use")
    _fill(knowledge_base.create_dataset("shelf"))
    yield knowledge_base
    knowledge_base.close()


@pytest.fixture
def shelf(shelf_kb: KnowledgeBase) -> Dataset:
    """Read-only: 40 documents on tea storage, alike enough that any may answer; metadata varies."""
    return shelf_kb.dataset("shelf")


def _fill(ds: Dataset) -> Dataset:
    meta = ds.metadata
    meta.add_field("category", "string")
    meta.add_field("year", "number")
    meta.add_field("published", "time")
    for i in range(40):
        doc = ds.add_text(
            f"note-{i:02d}.txt",
            f"Green tea storage note {i}: keep green tea leaves sealed, cool and away from light. "
            f"Oolong and green tea lose aroma in humid air; note {i} says so.",
        )
        values: dict[str, Any] = {"year": 1990 + i, "published": f"20{10 + i % 10}-06-01"}
        if i % 10:
            values["category"] = "rare" if i in (7, 23, 38) else f"common-{i % 3}"
        meta.set_values(doc.id, values)
    return ds


def _names(ds: Dataset, query: str = "green tea storage", **options: Any) -> list[str]:
    return [hit.document_name for hit in ds.search(query, **options)]


@pytest.mark.parametrize("method", CHANNELS)
def test_a_narrow_filter_still_fills_top_k_in_every_channel(shelf: Dataset, method: str) -> None:
    # recall_k = top_k: a filter applied after recall would find at most what the first 3 hold
    where = {"conditions": [{"name": "category", "comparison_operator": "is", "value": "rare"}]}
    names = _names(shelf, "green tea leaves sealed", search_method=method, top_k=3, recall_k=3, filter=where)
    assert sorted(names) == ["note-07.txt", "note-23.txt", "note-38.txt"]


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"name": "category", "comparison_operator": "contains", "value": "RAR"}, {7, 23, 38}),
        ({"name": "category", "comparison_operator": "start with", "value": "common"}, None),
        ({"name": "category", "comparison_operator": "end with", "value": "-2"}, None),
        ({"name": "category", "comparison_operator": "is", "value": "common-1"}, None),
        ({"name": "category", "comparison_operator": "in", "value": ["rare", "common-0"]}, None),
        ({"name": "category", "comparison_operator": "empty"}, {0, 10, 20, 30}),
        ({"name": "year", "comparison_operator": "=", "value": 2000}, {10}),
        ({"name": "year", "comparison_operator": ">", "value": 2026}, {37, 38, 39}),
        ({"name": "year", "comparison_operator": "≤", "value": "1991"}, {0, 1}),
        ({"name": "year", "comparison_operator": ">=", "value": 2027}, {37, 38, 39}),
        ({"name": "year", "comparison_operator": "in", "value": ["1995", "1996"]}, {5, 6}),
        ({"name": "published", "comparison_operator": "after", "value": "2019-01-01"}, {9, 19, 29, 39}),
        (
            {"name": "published", "comparison_operator": "before", "value": "2011-01-01T00:00:00Z"},
            {0, 10, 20, 30},
        ),
        (
            {"name": "document_name", "comparison_operator": "start with", "value": "note-3"},
            set(range(30, 40)),
        ),
    ],
)
def test_each_operator_keeps_exactly_the_matching_documents(
    shelf: Dataset, condition: dict[str, Any], expected: set[int] | None
) -> None:
    shelf.metadata.set_builtin(condition["name"] == "document_name")
    values = {i: _values_of(i) for i in range(40)}
    if expected is None:  # computed from the values written by the fixture
        expected = {i for i, v in values.items() if _python_test(condition, v)}
    names = _names(shelf, top_k=40, filter={"conditions": [condition]})
    assert {int(n[5:7]) for n in names} == expected


def test_negative_operators_include_documents_without_a_value(shelf: Dataset) -> None:
    where = {"conditions": [{"name": "category", "comparison_operator": "not contains", "value": "common"}]}
    assert {int(n[5:7]) for n in _names(shelf, top_k=40, filter=where)} == {0, 10, 20, 30, 7, 23, 38}


def test_or_joins_conditions_and_a_wide_filter_excludes_the_few(shelf: Dataset) -> None:
    where = {
        "logical_operator": "or",
        "conditions": [
            {"name": "year", "comparison_operator": "<", "value": 1992},
            {"name": "category", "comparison_operator": "is", "value": "rare"},
        ],
    }
    assert {int(n[5:7]) for n in _names(shelf, top_k=40, filter=where)} == {0, 1, 7, 23, 38}
    wide = {"conditions": [{"name": "year", "comparison_operator": "≠", "value": 1990}]}
    scope = shelf.metadata.scope(shelf.retrieval.merged({"metadata_filter": wide}).metadata_filter)  # type: ignore[arg-type]
    assert scope is not None and scope.exclude and len(scope.ids) == 1
    assert len(_names(shelf, top_k=40, filter=wide)) == 39


@pytest.mark.parametrize(
    ("below", "exclude", "listed"), [(2010, False, 20), (2011, True, 19), (1991, False, 1)]
)
def test_a_scope_lists_the_fewer_side_half_included(
    shelf: Dataset, below: int, exclude: bool, listed: int
) -> None:
    # 40 documents, years 1990-2029: exactly half kept lists the kept; one more, the others
    where = {"conditions": [{"name": "year", "comparison_operator": "<", "value": below}]}
    scope = shelf.metadata.scope(shelf.retrieval.merged({"metadata_filter": where}).metadata_filter)  # type: ignore[arg-type]
    assert scope is not None and scope.exclude is exclude and len(scope.ids) == listed
    assert len(_names(shelf, top_k=40, filter=where)) == below - 1990


def test_a_filter_that_matches_nothing_returns_nothing(shelf: Dataset) -> None:
    where = {"conditions": [{"name": "category", "comparison_operator": "is", "value": "none such"}]}
    assert _names(shelf, filter=where) == []


def _one(name: str, operator: str, value: Any) -> dict[str, Any]:
    return {"conditions": [{"name": name, "comparison_operator": operator, "value": value}]}


def test_bad_filters_name_the_condition(shelf: Dataset) -> None:
    shelf.metadata.set_builtin(False)
    with pytest.raises(InvalidInput, match=r"conditions\[0\]\.name: no metadata field 'colour'"):
        shelf.search("tea", filter=_one("colour", "is", "x"))
    with pytest.raises(InvalidInput, match=r"conditions\[1\]\.comparison_operator: '>' does not apply"):
        shelf.search(
            "tea",
            filter={
                "conditions": [
                    {"name": "year", "comparison_operator": ">", "value": 1},
                    {"name": "category", "comparison_operator": ">", "value": "a"},
                ]
            },
        )
    with pytest.raises(InvalidInput, match=r"conditions\[0\]\.value: expected a number"):
        shelf.search("tea", filter=_one("year", "=", "x"))
    with pytest.raises(InvalidInput, match="document_name"):  # built-ins are off until enabled
        shelf.search("tea", filter=_one("document_name", "is", "a"))


def test_fields_rename_delete_and_values(kb: KnowledgeBase) -> None:
    shelf = _fill(kb.create_dataset("own"))
    meta = shelf.metadata
    category = next(f for f in meta.fields() if f.name == "category")
    with pytest.raises(AlreadyExists):
        meta.add_field("year", "number")
    with pytest.raises(AlreadyExists):
        meta.rename_field(category.id, "document_name")
    meta.rename_field(category.id, "kind")
    doc = next(d for d in shelf.documents() if d.name == "note-07.txt")
    assert meta.values(doc.id)["kind"] == "rare"
    where = {"conditions": [{"name": "kind", "comparison_operator": "is", "value": "rare"}]}
    assert len(_names(shelf, top_k=40, filter=where)) == 3
    year = next(f for f in meta.fields() if f.name == "year")
    published = next(f for f in meta.fields() if f.name == "published")
    # every field's documents with a value, numbers and times too, counted by the database
    assert meta.use_counts() == {category.id: 36, year.id: 40, published.id: 40}
    meta.delete_field(category.id)
    assert "kind" not in meta.values(doc.id)
    with pytest.raises(InvalidInput, match="metadata.year: expected a number"):
        meta.set_values(doc.id, {"year": "soon"})
    with pytest.raises(InvalidInput, match="metadata.colour"):
        meta.set_values(doc.id, {"colour": "red"})


def _values_of(i: int) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if i % 10:
        values["category"] = "rare" if i in (7, 23, 38) else f"common-{i % 3}"
    return values


def _python_test(condition: dict[str, Any], values: dict[str, Any]) -> bool:
    value = values.get(condition["name"])
    op, wanted = condition["comparison_operator"], condition.get("value")
    if value is None:
        return False
    return {
        "start with": lambda: value.startswith(wanted),
        "end with": lambda: value.endswith(wanted),
        "is": lambda: value == wanted,
        "in": lambda: value in wanted,
    }[op]()
