"""``zhiku segment list|show|edit|enable|disable`` on a real knowledge base."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from tests.cli.conftest import TEA_FILES


def _segment_of(run_json: Any, document: str) -> dict[str, Any]:
    (only,) = run_json("segment", "list", "--dataset", "tea", "--document", document)["segments"]
    return only  # type: ignore[no-any-return]


def _full_text(run: Any, query: str) -> list[str]:
    result = run("search", query, "--dataset", "tea", "--method", "full_text", "--json")
    return [hit["content"] for hit in json.loads(result.stdout)]


def test_list_pages_filters_and_shows(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    everything = run_json("segment", "list", "--dataset", "tea")
    assert everything["total"] == 3 and everything["page"] == 1
    assert sorted(s["content"] for s in everything["segments"]) == sorted(TEA_FILES.values())
    assert {s["document_name"] for s in everything["segments"]} == {"a.txt", "b.txt"}
    first, second = (
        run_json("segment", "list", "--dataset", "tea", "--limit", "2", "--page", str(page))
        for page in (1, 2)
    )
    assert first["total"] == second["total"] == 3 and len(first["segments"]) == 2
    assert [s["id"] for s in first["segments"] + second["segments"]] == [
        s["id"] for s in everything["segments"]
    ]
    assert (
        "segments 3-3 of 3"
        in run("segment", "list", "--dataset", "tea", "--limit", "2", "--page", "2").output
    )

    tea_ones = run_json("segment", "list", "--dataset", "tea", "--keyword", "TEA")
    assert tea_ones["total"] == 2 and all("tea" in s["content"] for s in tea_ones["segments"])
    assert _segment_of(run_json, "b.txt")["content"] == TEA_FILES["b.txt"]
    ambiguous = run("segment", "list", "--dataset", "tea", "--document", "a.txt", code=1)
    assert "give one of their ids" in ambiguous.stderr

    segment = _segment_of(run_json, "b.txt")
    shown = run_json("segment", "show", segment["id"], "--dataset", "tea")
    assert shown == segment and shown["keywords"] and shown["enabled"] is True
    text = run("segment", "show", segment["id"], "--dataset", "tea").output
    assert "document  b.txt" in text and TEA_FILES["b.txt"] in text
    missing = run("segment", "show", "no-such-segment", "--dataset", "tea", "--json", code=1)
    assert json.loads(missing.stdout)["error"]["code"] == "not_found"
    assert missing.stderr.strip() == "Error: no segment 'no-such-segment' in this dataset"


def test_edit_then_search_finds_the_new_phrase(run, run_json, tea: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    segment = _segment_of(run_json, "b.txt")
    assert _full_text(run, "bamboo baskets") == [TEA_FILES["b.txt"]]
    new = "Pu-erh is fermented and stored in limestone caves near Kunming."
    edited = run_json("segment", "edit", segment["id"], "--dataset", "tea", "--content", new)
    assert edited["content"] == new and edited["id"] == segment["id"] and "kunming" in edited["keywords"]
    assert _full_text(run, "limestone caves Kunming") == [new]
    assert _full_text(run, "bamboo baskets") == []
    semantic = run("search", "limestone caves", "--dataset", "tea", "--method", "semantic", "--top-k", "1")
    assert "limestone caves" in semantic.output

    answer_file = tmp_path / "new.txt"
    answer_file.write_text("Shou pu-erh is ripened in wet piles for weeks.\n", encoding="utf-8")
    run("segment", "edit", segment["id"], "--dataset", "tea", "--content-file", str(answer_file))
    assert _full_text(run, "ripened wet piles") == ["Shou pu-erh is ripened in wet piles for weeks."]
    run(
        "segment",
        "edit",
        segment["id"],
        "--dataset",
        "tea",
        "--content-file",
        "-",
        stdin="Sheng pu-erh is raw.",
    )
    assert _full_text(run, "sheng raw") == ["Sheng pu-erh is raw."]

    keyworded = run_json("segment", "edit", segment["id"], "--dataset", "tea", "--keywords", "生普, raw tea")
    assert keyworded["keywords"] == ["生普", "raw tea"] and keyworded["content"] == "Sheng pu-erh is raw."
    keyword_hits = run("search", "生普", "--dataset", "tea", "--method", "keyword", "--json")
    assert [hit["segment_id"] for hit in json.loads(keyword_hits.stdout)] == [segment["id"]]

    both = run(
        "segment", "edit", segment["id"], "--dataset", "tea", "--content", "x", "--content-file", "-", code=2
    )
    assert "not both" in both.output
    assert "nothing to change" in run("segment", "edit", segment["id"], "--dataset", "tea", code=2).output
    empty = run("segment", "edit", segment["id"], "--dataset", "tea", "--content", "  ", code=1)
    assert "non-empty content" in empty.stderr


def test_a_disabled_segment_is_not_found_until_enabled(run, run_json, tea: Path) -> None:  # type: ignore[no-untyped-def]
    segment = _segment_of(run_json, "b.txt")
    # an unknown id among several changes nothing
    for unknown in ("no-such-segment", str(uuid.uuid4())):
        refused = run("segment", "disable", segment["id"], unknown, "--dataset", "tea", code=1)
        assert refused.stderr.strip() == f"Error: no segment {unknown!r} in dataset 'tea'"
    assert _full_text(run, "bamboo baskets") == [TEA_FILES["b.txt"]]

    disabled = run_json("segment", "disable", segment["id"], "--dataset", "tea")
    assert disabled == {"segments": [{"id": segment["id"], "enabled": False}]}
    assert _full_text(run, "bamboo baskets") == []
    semantic = run("search", "aged in bamboo baskets", "--dataset", "tea", "--method", "semantic", "--json")
    assert segment["id"] not in [hit["segment_id"] for hit in json.loads(semantic.stdout)]
    listed = run_json("segment", "list", "--dataset", "tea", "--disabled")
    assert [s["id"] for s in listed["segments"]] == [segment["id"]] and listed["segments"][0][
        "enabled"
    ] is False
    assert run_json("segment", "list", "--dataset", "tea", "--enabled")["total"] == 2
    assert "[disabled]" in run("segment", "list", "--dataset", "tea").output

    run("segment", "enable", segment["id"], "no-such-segment", "--dataset", "tea", code=1)
    assert _full_text(run, "bamboo baskets") == []
    assert "enabled segment" in run("segment", "enable", segment["id"], "--dataset", "tea").output
    assert _full_text(run, "bamboo baskets") == [TEA_FILES["b.txt"]]


def test_child_chunks_of_a_parent_child_dataset(run, run_json, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    run("dataset", "create", "pc", "--doc-form", "hierarchical_model", "--child-max-tokens", "16")
    text = "Oolong is half oxidised and rolled by hand. Tieguanyin is an oolong from Anxi county."
    (tmp_path / "oolong.txt").write_text(text, encoding="utf-8")
    run("ingest", str(tmp_path / "oolong.txt"), "--dataset", "pc")
    (parent,) = run_json("segment", "list", "--dataset", "pc")["segments"]
    children = run_json("segment", "children", parent["id"], "--dataset", "pc")
    assert children["total"] == len(children["children"])
    assert children["total"] >= 2
    assert all(child["content"] in text for child in children["children"])
    pc = ("--dataset", "pc")
    added = run_json("segment", "add-child", parent["id"], *pc, "--content", "A wombat tastes it.")
    found = run("search", "wombat", "--dataset", "pc", "--method", "keyword", "--json").stdout
    assert [hit["content"] for hit in json.loads(found)] == [text]
    run("segment", "edit-child", parent["id"], added["id"], *pc, "--content", "A quokka tastes it.")
    assert run_json("segment", "children", parent["id"], *pc, "--keyword", "quokka")["total"] == 1
    run("segment", "delete-child", parent["id"], added["id"], "--dataset", "pc")
    assert run_json("segment", "children", parent["id"], "--dataset", "pc")["total"] == children["total"]
    flat = run("dataset", "create", "flat")
    assert flat.exit_code == 0
    (tmp_path / "flat.txt").write_text("Plain text only.", encoding="utf-8")
    run("ingest", str(tmp_path / "flat.txt"), "--dataset", "flat")
    (plain,) = run_json("segment", "list", "--dataset", "flat")["segments"]
    refused = run("segment", "add-child", plain["id"], "--dataset", "flat", "--content", "x", code=1)
    assert "hierarchical_model" in refused.stderr
