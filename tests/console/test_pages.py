"""The console's pages on a real knowledge base: escaping, bounded forms, hit testing with each
channel's score and rank, a segment edit seen by the next hit test, a failed document's retry,
metadata filters, and the Chinese catalogue covering every template."""

from __future__ import annotations

import re
from io import BytesIO
from pathlib import Path

from flask import Flask

from tests.api.conftest import context_of
from tests.console.conftest import Console
from tests.fixtures.make_files import pdf_bytes
from zhiku.console.channel_chart import BAR_WIDTH, channel_bars
from zhiku.console.history import PastQuery, QueryHistory
from zhiku.console.i18n import ZH
from zhiku.core.retrieval_config import RetrievalConfig

TEMPLATES = Path(__file__).parents[2] / "zhiku" / "console" / "templates"


def _hits(page: str) -> list[str]:
    return re.findall(r'<li class="hit" data-segment="([^"]+)"', page)


def test_document_content_and_names_are_shown_as_text(console: Console) -> None:
    dataset = console.create_dataset("<b>bold</b> set")
    console.add_text(
        dataset, "<img src=x onerror=alert(1)>.txt", "<script>alert('x')</script> tea grows on hills"
    )
    rows = console.wait_indexed(dataset)
    assert "<img src=x" not in rows and "&lt;img src=x onerror=alert(1)&gt;.txt" in rows
    for page in (f"/datasets/{dataset}/segments", f"/datasets/{dataset}", "/datasets"):
        html = console.get(page).get_data(as_text=True)
        assert "<script>alert" not in html and "<b>bold</b>" not in html and "<img src=x" not in html, page
    assert "&lt;b&gt;bold&lt;/b&gt; set" in console.get("/datasets").get_data(as_text=True)
    segments = console.get(f"/datasets/{dataset}/segments").get_data(as_text=True)
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; tea grows on hills" in segments
    hit = console.post(f"/datasets/{dataset}/hit-testing", {"query": "tea hills"}).get_data(as_text=True)
    assert "&lt;script&gt;alert(&#39;x&#39;)" in hit and "<script>alert" not in hit


def test_forms_are_bounded_and_errors_name_the_field(console: Console) -> None:
    dataset = console.create_dataset("bounds")
    accept = {"Accept": "application/json"}
    cases = {
        "top_k": {"query": "q", "top_k": "100000"},
        "query": {"query": "x" * 5000},
        "weight_semantic": {"query": "q", "weight_semantic": "nan"},
        "search_method": {"query": "q", "search_method": "drop table"},
        "filter_0_name": {"query": "q", "filter_0_name": "no such field"},
    }
    for field, form in cases.items():
        response = console.post(f"/datasets/{dataset}/hit-testing", form, headers=accept)
        assert response.status_code == 400, field
        body = response.json
        assert body["code"] == "invalid_param" and body["message"].startswith(field), body  # type: ignore[index]
    page = console.post(f"/datasets/{dataset}/hit-testing", cases["top_k"])
    beside = re.search(r'id="error-hit-top_k"[^>]*>([^<]+)<', page.get_data(as_text=True))
    assert page.status_code == 400 and beside and beside[1] == "between 1 and 100"
    long_name = console.post("/datasets", {"name": "n" * 300}, headers=accept)
    assert long_name.status_code == 400 and long_name.json["message"].startswith("name")  # type: ignore[index]
    none = console.post(f"/datasets/{dataset}/upload", {}, headers=accept)
    assert none.status_code == 400 and none.json["message"].startswith("file")  # type: ignore[index]
    unknown = console.post(
        f"/datasets/{dataset}/upload", {"file": (BytesIO(b"\x00\x01\x02binary"), "blob.bin")}, headers=accept
    )
    assert unknown.status_code == 415
    bad_choice = console.post(
        f"/datasets/{dataset}/upload",
        {"file": (BytesIO(b"Green tea."), "green.txt"), "on_duplicate": "overwrite"},
        headers=accept,
    )
    assert bad_choice.status_code == 400 and bad_choice.json["message"].startswith("on_duplicate")  # type: ignore[index]


def test_hit_testing_shows_channel_scores_ranks_and_history(console: Console) -> None:
    dataset = console.create_dataset("tea")
    console.add_text(dataset, "green.txt", "Green tea is steamed or pan-fired soon after picking.")
    console.add_text(dataset, "black.txt", "Black tea is fully oxidised before it is dried.")
    console.wait_indexed(dataset)
    threshold = RetrievalConfig().score_threshold
    assert threshold is not None
    page = console.post(
        f"/datasets/{dataset}/hit-testing", {"query": "oxidised black tea", "score_threshold": str(threshold)}
    ).get_data(as_text=True)
    every = console.post(f"/datasets/{dataset}/hit-testing", {"query": "oxidised black tea"})
    assert len(_hits(every.get_data(as_text=True))) == 2  # no threshold in the form: every hit
    assert 1 <= len(_hits(page)) <= 2
    first = page.split('<li class="hit"')[1]
    assert "black.txt" in first
    for channel in ("relevance", "semantic", "full_text"):
        assert f'data-channel="{channel}"' in first
    assert re.search(r'data-channel="full_text">.*?rank 1', first, re.S)
    # the relevance bar is absolute (0 to 1) and carries the dataset's threshold as a mark
    score = float(re.search(r'data-channel="relevance">.*?<td class="score">([0-9.]+)', first, re.S)[1])
    assert f'class="fill fill-relevance" width="{max(1, round(BAR_WIDTH * score))}"' in first
    assert f'class="threshold" x="{max(round(BAR_WIDTH * threshold) - 1, 0)}"' in first
    assert f"({threshold}, the line on the bar)" in page
    history = console.get(f"/datasets/{dataset}/hit-testing").get_data(as_text=True)
    assert "oxidised black tea" in history.split('id="history"')[1]
    # change the settings beside the query, run again, then save them
    only_bm25 = console.post(
        f"/datasets/{dataset}/hit-testing",
        {"query": "oxidised black tea", "search_method": "full_text_search", "top_k": "1"},
    ).get_data(as_text=True)
    assert len(_hits(only_bm25)) == 1 and 'data-channel="semantic"' not in only_bm25
    saved = console.post(
        f"/datasets/{dataset}/hit-testing",
        {"query": "tea", "search_method": "full_text_search", "top_k": "3", "action": "save"},
    )
    assert 'id="saved"' in saved.get_data(as_text=True)
    settings = console.get(f"/datasets/{dataset}/settings").get_data(as_text=True)
    assert '<option value="full_text_search" selected>' in settings


def test_an_edited_segment_is_found_by_the_next_hit_test(console: Console) -> None:
    dataset = console.create_dataset("edits")
    console.add_text(dataset, "note.txt", "The kettle is on the stove.")
    console.wait_indexed(dataset)
    segments = console.get(f"/datasets/{dataset}/segments").get_data(as_text=True)
    (segment,) = re.findall(r'<article class="segment" data-segment="([^"]+)"', segments)
    edited = console.post(
        f"/datasets/{dataset}/segments/{segment}",
        {"content": "Oolong is partly oxidised.", "keywords": "oolong, 乌龙", "next": "//evil.example"},
    )
    assert edited.status_code == 302 and edited.headers["Location"] == f"/datasets/{dataset}/segments"
    hit = console.post(
        f"/datasets/{dataset}/hit-testing", {"query": "oolong", "search_method": "full_text_search"}
    ).get_data(as_text=True)
    assert _hits(hit) == [segment] and "Oolong is partly oxidised." in hit
    disabled = console.post(f"/datasets/{dataset}/segments/{segment}", {"enabled": "0"})
    assert disabled.status_code == 302
    after = console.post(
        f"/datasets/{dataset}/hit-testing", {"query": "oolong", "search_method": "full_text_search"}
    ).get_data(as_text=True)
    assert _hits(after) == []
    listing = console.get(f"/datasets/{dataset}/segments?enabled=no").get_data(as_text=True)
    assert segment in listing


def test_a_failed_document_shows_its_error_and_retries(console: Console) -> None:
    dataset = console.create_dataset("broken")
    data = pdf_bytes(["half a page"])
    response = console.post(
        f"/datasets/{dataset}/upload",
        {"file": (BytesIO(data[: len(data) // 2]), "cut.pdf")},
        headers={"Accept": "application/json"},
    )
    document = response.json["documents"][0]["id"]  # type: ignore[index]
    rows = console.wait_indexed(dataset)
    row = rows.split(f'data-document="{document}"')[1]
    assert 'data-status="error"' in rows and 'class="error doc-error"' in row
    assert 'data-action="retry"' in row
    retried = console.post(f"/datasets/{dataset}/documents/{document}/retry")
    assert retried.status_code == 302
    again = console.wait_indexed(dataset)
    assert 'data-status="error"' in again  # the same bytes fail the same way, and say so again


def test_metadata_values_filter_the_hit_test(console: Console) -> None:
    dataset = console.create_dataset("filtered")
    assert (
        console.post(
            f"/datasets/{dataset}/fields", {"action": "add", "name": "region", "type": "string"}
        ).status_code
        == 302
    )
    settings = console.get(f"/datasets/{dataset}/settings").get_data(as_text=True)
    (field_id,) = re.findall(r'name="field_id" value="([^"]+)"', settings)[:1]
    yunnan = console.add_text(dataset, "pu-erh.txt", "Pu-erh tea is aged for years.")
    fujian = console.add_text(dataset, "oolong.txt", "Oolong tea is rolled and aged briefly.")
    console.wait_indexed(dataset)
    for document, region in ((yunnan, "Yunnan"), (fujian, "Fujian")):
        saved = console.post(
            f"/datasets/{dataset}/documents/{document}/metadata", {f"meta_{field_id}": region}
        )
        assert saved.status_code == 302
    form = {"query": "aged tea", "filter_0_name": "region", "filter_0_op": "is", "filter_0_value": "Fujian"}
    page = console.post(f"/datasets/{dataset}/hit-testing", form).get_data(as_text=True)
    assert len(_hits(page)) == 1 and "oolong.txt" in page and "region: Fujian" in page


def test_every_template_text_has_a_chinese_translation() -> None:
    used = set()
    for template in TEMPLATES.glob("*.html"):
        used |= set(re.findall(r"""_\((?:"([^"]+)"|'([^']+)')\)""", template.read_text()))
    texts = {a or b for a, b in used}
    assert texts and not sorted(texts - set(ZH))


def test_relevance_bars_are_absolute_and_channel_bars_scale_to_their_best_hit() -> None:
    records = [
        {
            "score": 0.9,
            "scores": {"semantic": 0.8, "full_text": 12.0},
            "ranks": {"semantic": 1, "full_text": 2},
        },
        {"score": 0.45, "scores": {"full_text": 24.0}, "ranks": {"full_text": 1}},
    ]
    first, second = channel_bars(records, ["semantic", "full_text"])
    # relevance is absolute (0 to 1); each channel is scaled to its best among the hits
    assert [bar.width for bar in first] == [round(BAR_WIDTH * 0.9), BAR_WIDTH, BAR_WIDTH // 2]
    assert [bar.width for bar in second] == [round(BAR_WIDTH * 0.45), 0, BAR_WIDTH]
    assert second[1].rank is None and second[2].rank == 1


def test_query_history_is_bounded_per_dataset_and_remembers_the_method(app: Flask, console: Console) -> None:
    dataset = console.create_dataset("history")
    other = console.create_dataset("other history")
    history = QueryHistory(context_of(app).kb.sessions, per_dataset=3)
    for n in range(5):
        history.add(PastQuery(dataset, f"q{n}", "full_text_search", n))
    history.add(PastQuery(other, "elsewhere", "semantic_search", 0))
    assert [(item.query, item.search_method) for item in history.recent(dataset)] == [
        ("q4", "full_text_search"),
        ("q3", "full_text_search"),
        ("q2", "full_text_search"),
    ]
    history.add(PastQuery(dataset, "q3", "full_text_search", 7))  # run again: to the top, once
    history.add(PastQuery(dataset, "q3", "semantic_search", 1))  # another method: its own entry
    assert [(item.query, item.search_method, item.hits) for item in history.recent(dataset)] == [
        ("q3", "semantic_search", 1),
        ("q3", "full_text_search", 7),
        ("q4", "full_text_search", 4),
    ]
    history.add(PastQuery(dataset, "z" * 10_000, "hybrid_search", 0))
    assert len(history.recent(dataset)[0].query) == 500
    assert [item.query for item in history.recent(other)] == ["elsewhere"]


def test_chat_streams_an_answer_with_its_sources(app: Flask, console: Console) -> None:
    dataset = console.create_dataset("chat")
    console.add_text(dataset, "water.txt", "Boil water at 85 degrees for green tea.")
    console.wait_indexed(dataset)
    response = console.post(
        "/chat/messages", {"query": "what temperature for green tea?", "datasets": dataset}
    )
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    body = response.get_data(as_text=True)
    assert '"event": "message_end"' in body and '"document_name": "water.txt"' in body
    page = console.get("/chat").get_data(as_text=True)
    assert "what temperature for green tea?" in page  # the new conversation is listed


def test_child_chunks_are_shown_edited_added_and_deleted(app: Flask, console: Console) -> None:
    from tests.api.conftest import context_of

    rule = {"doc_form": "hierarchical_model", "max_tokens": 120, "chunk_overlap": 0, "child_max_tokens": 16}
    dataset = context_of(app).kb.create_dataset("parents", process_rule=rule).id
    text = " ".join(f"Tea garden {i} grows leaves on terraced hills beside the river." for i in range(8))
    console.add_text(dataset, "garden.txt", text)
    console.wait_indexed(dataset)
    listing = console.get(f"/datasets/{dataset}/segments").get_data(as_text=True)
    segment = re.findall(r'data-segment="([^"]+)"', listing)[0]
    assert "child chunks" in listing
    page = console.get(f"/datasets/{dataset}/segments/{segment}").get_data(as_text=True)
    children = re.findall(r'data-child="([^"]+)"', page)
    assert len(children) > 1 and "Tea garden 0" in page

    base = f"/datasets/{dataset}/segments/{segment}/children"
    assert console.post(f"{base}/{children[0]}", {"content": "Zebrafish tea is rare."}).status_code == 302
    assert console.post(base, {"content": "Quokka oolong grows by the sea."}).status_code == 302
    assert console.post(f"{base}/{children[1]}", {"action": "delete"}).status_code == 302
    page = console.get(f"/datasets/{dataset}/segments/{segment}").get_data(as_text=True)
    assert "Zebrafish tea is rare." in page and "Quokka oolong" in page
    assert len(re.findall(r'data-child="([^"]+)"', page)) == len(children)  # one added, one deleted
    for query in ("zebrafish", "quokka"):
        form = {"query": query, "search_method": "full_text_search"}
        hit = console.post(f"/datasets/{dataset}/hit-testing", form)
        assert _hits(hit.get_data(as_text=True)) == [segment], query
    refused = console.post(base, {"content": "x"}, csrf=False)
    assert refused.status_code in (400, 403)
