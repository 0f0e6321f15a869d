"""A stored answer's ``[n]`` markers matched to the sources it cited, by their number."""

from __future__ import annotations

from zhiku.console.citations import cited_parts


def test_markers_link_by_number_not_by_position() -> None:
    source = {"number": 1, "position": 7, "segment_id": "s1", "dataset_id": "d"}
    parts = cited_parts("Puer is aged [1]. Mars [2] is not cited.", [source])
    assert parts == [
        ("Puer is aged ", None),
        ("[1]", source),
        (". Mars [2] is not cited.", None),
    ]


def test_text_without_markers_is_one_part_and_junk_sources_are_ignored() -> None:
    assert cited_parts("plain", ["not a mapping", {"number": 1}]) == [("plain", None)]
    assert cited_parts("", []) == []
