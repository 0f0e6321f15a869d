"""Parent-child in the console: a new dataset chooses its index method; the settings page sets
the parent mode, the child chunk length and separator, used by the next preview and indexing;
hit testing shows each hit's matched child chunks with their own scores."""

from __future__ import annotations

import re
from io import BytesIO

import pytest
from flask import Flask

from tests.api.conftest import context_of
from tests.console.conftest import Console

#: Four short paragraphs, each of three sentences each ended by "|".
TEXT = "\n\n".join(
    f"Garden {n} grows tea on the hill | Pickers come at dawn in spring | The leaves dry by noon. |"
    for n in range(4)
)


def _rule(app: Flask, dataset_id: str):  # type: ignore[no-untyped-def]
    return context_of(app).kb.dataset(dataset_id).process_rule


@pytest.mark.parametrize(
    ("method", "doc_form", "summary"),
    [
        ("paragraph", "paragraph", "off"),
        ("hierarchical_model", "hierarchical_model", "off"),
        ("qa_model", "qa_model", "off"),
        ("summary", "paragraph", "llm"),
    ],
)
def test_a_new_dataset_chooses_its_index_method(
    app: Flask, console: Console, method: str, doc_form: str, summary: str
) -> None:
    page = console.get("/datasets").get_data(as_text=True)
    assert '<select name="index_method" id="index-method">' in page
    assert ">Parent-child</option>" in page and ">Summary index</option>" in page
    response = console.post("/datasets", {"name": f"made {method}", "index_method": method})
    assert response.status_code == 302
    rule = _rule(app, response.headers["Location"].rsplit("/", 1)[-1])
    assert (rule.doc_form, rule.summary) == (doc_form, summary)


def test_an_unknown_index_method_is_refused_naming_the_field(console: Console) -> None:
    refused = console.post(
        "/datasets", {"name": "odd", "index_method": "tree"}, headers={"Accept": "application/json"}
    )
    assert refused.status_code == 400 and "index_method" in refused.json["message"]  # type: ignore[index]
    page = console.post("/datasets", {"name": "odd", "index_method": "tree"})
    assert page.status_code == 400 and 'id="error-create-index_method"' in page.get_data(as_text=True)


def test_parent_child_settings_are_shown_saved_and_cut_the_next_preview_and_index(
    app: Flask, console: Console
) -> None:
    created = console.post("/datasets", {"name": "parents", "index_method": "hierarchical_model"})
    dataset = created.headers["Location"].rsplit("/", 1)[-1]
    page = console.get(f"/datasets/{dataset}/settings").get_data(as_text=True)
    fieldset = page.split('<fieldset id="parent-child" data-doc-form="hierarchical_model">')[1]
    assert 'name="parent_mode" value="paragraph" checked' in fieldset
    assert "Full document" in fieldset and "Child chunk length (tokens)" in fieldset
    assert 'name="child_separator" id="child_separator" value=""' in fieldset  # automatic

    form = {
        "name": "parents",
        "doc_form": "hierarchical_model",
        "splitter": "recursive",
        "cleaners": ["default"],
        "parent_mode": "full-doc",
        "child_max_tokens": "40",
        "child_separator": "|",
    }
    assert console.post(f"/datasets/{dataset}/settings", form).status_code == 302
    rule = _rule(app, dataset)
    assert (rule.parent_mode, rule.child_max_tokens) == ("full-doc", 40)
    assert (rule.child_splitter, rule.child_separator) == ("fixed_separator", "|")
    page = console.get(f"/datasets/{dataset}/settings").get_data(as_text=True)
    assert 'name="parent_mode" value="full-doc" checked' in page
    assert (
        'id="child_separator" value="|"' in page
        and 'id="child_max_tokens" min="16" max="8192" value="40"' in page
    )

    # the next preview: one parent (the whole file), cut into a child per sentence
    preview = console.post(
        f"/datasets/{dataset}/preview", {"file": (BytesIO(TEXT.encode()), "garden.txt")}
    ).get_data(as_text=True)
    assert preview.count('<li class="preview-segment">') == 1
    assert "Parent chunk: Full document" in preview and "Child chunk length (tokens): 40" in preview
    children = re.findall(r"<ul class=\"preview-children\">(.*?)</ul>", preview, re.S)[0]
    assert children.count("<li>") == 12
    # and the next indexing
    console.add_text(dataset, "garden.txt", TEXT)
    console.wait_indexed(dataset)
    segments = context_of(app).kb.dataset(dataset).segments(with_children=True)
    assert len(segments) == 1 and len(segments[0].children) == 12

    # an empty separator: automatic again; a bad length refused beside its field
    console.post(f"/datasets/{dataset}/settings", {**form, "child_separator": ""})
    assert _rule(app, dataset).child_splitter == "recursive"
    bad = console.post(f"/datasets/{dataset}/settings", {**form, "child_max_tokens": "8"})
    assert bad.status_code == 400
    assert 'id="error-settings-child_max_tokens"' in bad.get_data(as_text=True)
    bad = console.post(f"/datasets/{dataset}/settings", {**form, "parent_mode": "chapter"})
    assert bad.status_code == 400 and 'id="error-settings-parent_mode"' in bad.get_data(as_text=True)


def test_hit_testing_shows_the_matched_child_chunks_with_their_scores(app: Flask, console: Console) -> None:
    rule = {
        "doc_form": "hierarchical_model",
        "parent_mode": "full-doc",
        "child_splitter": "fixed_separator",
        "child_separator": "|",
        "child_max_tokens": 40,
    }
    dataset = context_of(app).kb.create_dataset("children", process_rule=rule).id
    console.add_text(dataset, "garden.txt", TEXT)
    console.add_text(dataset, "river.txt", "Boats carry the tea downriver | Merchants weigh it in town.")
    console.wait_indexed(dataset)
    form = {"query": "pickers at dawn in spring", "search_method": "full_text_search"}
    page = console.post(f"/datasets/{dataset}/hit-testing", form).get_data(as_text=True)
    first = page.split('<li class="hit"')[1]
    assert "garden.txt" in first and "Matched child chunks" in first
    matched = re.findall(
        r'<li class="child-hit" data-child="[^"]+"><span class="badge">C-(\d+)</span> '
        r'<span class="score" title="Relevance">([0-9.]+)</span> <span class="child-content">([^<]*)</span>',
        first,
    )
    assert matched and all(content == "Pickers come at dawn in spring" for _, _, content in matched)
    assert {int(position) for position, _, _ in matched} <= {2, 5, 8, 11}  # the second of each three
    scores = [float(score) for _, score, _ in matched]
    assert scores == sorted(scores, reverse=True) and all(0 < score <= 1 for score in scores)
    zh = console.post(f"/datasets/{dataset}/hit-testing", form, headers={"Accept-Language": "zh-CN"})
    assert "命中的子块" in zh.get_data(as_text=True)
    paragraph = console.create_dataset("flat")
    console.add_text(paragraph, "garden.txt", TEXT)
    console.wait_indexed(paragraph)
    flat = console.post(f"/datasets/{paragraph}/hit-testing", form).get_data(as_text=True)
    assert 'class="child-hit"' not in flat
