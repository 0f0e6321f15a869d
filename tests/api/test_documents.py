"""Documents: background indexing from text and files, updates, listing, batch status changes,
retry, pause and resume; the uploads kept under the data directory."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from flask import Flask

from tests.api.conftest import UNDER_WAY, Api, context_of, make_app
from tests.fixtures.make_files import make_docx, pdf_bytes

GREEN = "Longjing is a green tea from Hangzhou, brewed at 80 degrees."
OOLONG = "铁观音是乌龙茶，产自福建安溪。"


def _hits(api: Api, dataset: str, query: str) -> list[str]:
    body = api.post(
        f"/v1/datasets/{dataset}/retrieve",
        json={"query": query, "retrieval_model": {"search_method": "full_text_search", "top_k": 5}},
    ).json
    return [record["segment"]["document"]["id"] for record in body["records"]]


def test_create_by_text_returns_at_once_and_indexes_in_background(api: Api, home: Path) -> None:
    dataset = api.create_dataset()
    response = api.post(
        f"/v1/datasets/{dataset}/document/create-by-text", json={"name": "green", "text": GREEN}
    )
    body = response.json
    # queued, or already claimed by the indexing worker (it polls as well as being woken)
    assert body["document"]["indexing_status"] in UNDER_WAY
    if body["document"]["indexing_status"] == "waiting":
        assert body["document"]["display_status"] == "queuing"
    assert len(body["batch"]) == 20 and body["batch"].isdigit()
    document = body["document"]["id"]
    assert (home / "uploads" / document / "green.txt").read_text(encoding="utf-8") == GREEN
    (status,) = api.wait(dataset, body["batch"])
    assert status["indexing_status"] == "completed"
    assert status["completed_segments"] == status["total_segments"] == 1
    stages = [
        status[key]
        for key in (
            "processing_started_at",
            "parsing_completed_at",
            "cleaning_completed_at",
            "splitting_completed_at",
            "completed_at",
        )
    ]
    assert all(stages) and stages == sorted(stages)
    info = api.get(f"/v1/datasets/{dataset}/documents/{document}").json
    assert info["display_status"] == "available" and info["word_count"] == len(GREEN) and info["tokens"] > 0
    assert _hits(api, dataset, "Longjing Hangzhou") == [document]


def test_create_by_file_pdf_and_docx_with_unsafe_names(api: Api, home: Path, tmp_path: Path) -> None:
    dataset = api.create_dataset()
    pdf = io.BytesIO(pdf_bytes(["普洱茶适合长期存放，需要通风并避免阳光直射。"]))
    created = api.post(
        f"/v1/datasets/{dataset}/document/create-by-file",
        data={"file": (pdf, "../../etc/普洱 茶.pdf"), "data": '{"indexing_technique": "high_quality"}'},
    ).json
    document = created["document"]["id"]
    assert created["document"]["name"] == "../../etc/普洱 茶.pdf"
    stored = list((home / "uploads" / document).iterdir())
    assert [path.name for path in stored] == ["普洱 茶.pdf"]
    docx_path = make_docx(
        tmp_path / "shipping.docx", sections=[("Shipping", ["Orders before 4 pm ship the same day."])]
    )
    with docx_path.open("rb") as handle:
        second = api.post(
            f"/v1/datasets/{dataset}/document/create-by-file",
            data={"file": (handle, "shipping.docx"), "data": '{"name": "Shipping rules"}'},
        ).json
    assert second["document"]["name"] == "Shipping rules"
    assert api.wait(dataset, created["batch"])[0]["indexing_status"] == "completed"
    assert api.wait(dataset, second["batch"])[0]["indexing_status"] == "completed"
    assert _hits(api, dataset, "普洱茶 存放")[0] == document
    assert _hits(api, dataset, "orders ship same day")[0] == second["document"]["id"]


def test_update_by_text_and_file_replace_the_segments(api: Api) -> None:
    dataset = api.create_dataset()
    document = api.indexed_text(dataset, "tea", GREEN)
    updated = api.post(
        f"/v1/datasets/{dataset}/documents/{document}/update-by-text", json={"name": "oolong", "text": OOLONG}
    ).json
    assert updated["document"]["id"] == document and updated["document"]["indexing_status"] in UNDER_WAY
    api.wait(dataset, updated["batch"])
    assert _hits(api, dataset, "铁观音 安溪") == [document] and _hits(api, dataset, "Longjing Hangzhou") == []
    assert api.get(f"/v1/datasets/{dataset}/documents/{document}").json["name"] == "oolong"

    renamed = api.post(
        f"/v1/datasets/{dataset}/documents/{document}/update-by-text", json={"name": "renamed"}
    ).json
    assert renamed["batch"] is None and renamed["document"]["name"] == "renamed"

    new_file = io.BytesIO(b"Black tea is fully oxidised and brewed with boiling water.")
    by_file = api.post(
        f"/v1/datasets/{dataset}/documents/{document}/update-by-file", data={"file": (new_file, "black.txt")}
    ).json
    api.wait(dataset, by_file["batch"])
    assert _hits(api, dataset, "oxidised boiling") == [document] and _hits(api, dataset, "铁观音 安溪") == []


def test_list_search_get_and_delete(api: Api, home: Path) -> None:
    dataset = api.create_dataset()
    ids = [api.indexed_text(dataset, f"doc-{n}", f"{GREEN} number {n}") for n in range(3)]
    listed = api.get(f"/v1/datasets/{dataset}/documents?limit=2").json
    assert (listed["total"], listed["has_more"], len(listed["data"])) == (3, True, 2)
    assert listed["data"][0]["id"] == ids[2] and listed["data"][0]["position"] == 3
    assert [d["id"] for d in api.get(f"/v1/datasets/{dataset}/documents?keyword=DOC-1").json["data"]] == [
        ids[1]
    ]
    assert api.delete(f"/v1/datasets/{dataset}/documents/{ids[1]}").json == {"result": "success"}
    assert api.get(f"/v1/datasets/{dataset}/documents/{ids[1]}").status_code == 404
    assert not (home / "uploads" / ids[1]).exists()
    assert api.get(f"/v1/datasets/{dataset}").json["document_count"] == 2


def test_a_delete_tells_the_workers_at_once(app: Flask, api: Api) -> None:
    """The in-process workers hear of a delete when it commits, as of a pause, so a run indexing
    the document stops at once rather than at its next look at the database."""
    heard: list[tuple[str, str]] = []
    context_of(app).queue.on_stop(lambda document_id, why: heard.append((document_id, why)))
    dataset = api.create_dataset()
    document = api.indexed_text(dataset, "doc", GREEN)
    assert api.delete(f"/v1/datasets/{dataset}/documents/{document}").status_code == 200
    assert heard == [(document, "deleted")]


def test_enable_disable_archive_in_batch(api: Api) -> None:
    dataset = api.create_dataset()
    document = api.indexed_text(dataset, "green", GREEN)
    base = f"/v1/datasets/{dataset}/documents/status"
    assert api.patch(f"{base}/disable", json={"document_ids": [document]}).json == {"result": "success"}
    assert _hits(api, dataset, "Longjing Hangzhou") == []
    assert api.get(f"/v1/datasets/{dataset}/documents/{document}").json["display_status"] == "disabled"
    api.patch(f"{base}/enable/batch", json={"document_ids": [document]})
    assert _hits(api, dataset, "Longjing Hangzhou") == [document]

    api.patch(f"{base}/archive", json={"document_ids": [document]})
    info = api.get(f"/v1/datasets/{dataset}/documents/{document}").json
    assert info["archived"] is True and info["display_status"] == "archived"
    assert _hits(api, dataset, "Longjing Hangzhou") == []
    refused = api.patch(f"{base}/enable", json={"document_ids": [document]})
    assert refused.status_code == 403 and refused.json["code"] == "archived_document_immutable"
    segments = api.get(f"/v1/datasets/{dataset}/documents/{document}/segments").json["data"]
    edit = api.post(
        f"/v1/datasets/{dataset}/documents/{document}/segments/{segments[0]['id']}",
        json={"segment": {"answer": "x"}},
    )
    assert edit.status_code == 403
    api.patch(f"{base}/un_archive", json={"document_ids": [document]})
    assert _hits(api, dataset, "Longjing Hangzhou") == [document]


def test_failed_document_is_retried_from_its_upload(api: Api, home: Path) -> None:
    dataset = api.create_dataset()
    document, batch = api.add_text(dataset, "blank", "   \n\n   ")
    (status,) = api.wait(dataset, batch)
    assert status["indexing_status"] == "error" and status["error"] and status["stopped_at"]
    refused = api.post(f"/v1/datasets/{dataset}/retry", json={"document_ids": [document]})
    assert refused.status_code == 200
    (again,) = api.wait(dataset, refused.json["batch"])
    assert again["indexing_status"] == "error"
    healthy = api.indexed_text(dataset, "ok", GREEN)
    conflict = api.post(f"/v1/datasets/{dataset}/retry", json={"document_ids": [healthy]})
    assert conflict.status_code == 409 and conflict.json["code"] == "invalid_state"


def test_pause_and_resume_a_waiting_document(home: Path) -> None:
    app = make_app(home, workers=False)
    try:
        _, secret = context_of(app).keys.create()
        api = Api(app.test_client(), secret)
        dataset = api.create_dataset()
        document, batch = api.add_text(dataset, "green", GREEN)
        base = f"/v1/datasets/{dataset}/documents/{document}/processing"
        assert api.patch(f"{base}/pause").json == {"result": "success"}
        queue = context_of(app).queue
        assert queue.claim() is None
        status = api.get(f"/v1/datasets/{dataset}/documents/{batch}/indexing-status").json["data"][0]
        assert status["indexing_status"] == "paused" and status["paused_at"]
        again = api.patch(f"{base}/pause")
        assert again.status_code == 409 and again.json["code"] == "invalid_state"
        assert api.patch(f"{base}/resume").json == {"result": "success"}
        job = queue.claim()
        assert job is not None and job.document_id == document
    finally:
        context_of(app).close()


def test_a_running_document_stops_at_the_next_stage(app: Flask, home: Path) -> None:
    kb = context_of(app).kb
    context_of(app).workers.stop()  # type: ignore[union-attr]
    queue = context_of(app).queue
    dataset = kb.create_dataset("paused")
    document = queue.enqueue(dataset.id, "green", GREEN.encode(), file_name="green.txt", batch="1")
    job = queue.claim()
    assert job is not None and kb.dataset(dataset.id).document(document).status == "parsing"
    queue.pause(dataset.id, document)
    info = dataset.index_waiting(document)
    assert info.status == "paused" and info.segment_count == 0 and dataset.segments(document) == []
    queue.resume(dataset.id, document)
    assert queue.claim() is not None
    assert dataset.index_waiting(document).status == "completed"


@pytest.mark.parametrize("store", ["data_dir", "database"])
def test_a_refused_update_leaves_the_queued_upload_alone(home: Path, store: str) -> None:
    """An update of a ``waiting`` document is refused (409) before anything is written: the
    queued upload keeps its content and the refused text is never indexed."""
    app = make_app(home, workers=False, upload_store=store)
    try:
        _, secret = context_of(app).keys.create()
        api = Api(app.test_client(), secret)
        dataset = api.create_dataset()
        document, _ = api.add_text(dataset, "green", GREEN)
        base = f"/v1/datasets/{dataset}/documents/{document}"
        for name in ("oolong", "green"):  # a new file name, and the same one
            refused = api.post(f"{base}/update-by-text", json={"name": name, "text": OOLONG})
            assert refused.status_code == 409 and refused.json["code"] == "document_indexing"
        by_file = api.post(
            f"{base}/update-by-file", data={"file": (io.BytesIO(OOLONG.encode()), "green.txt")}
        )
        assert by_file.status_code == 409 and by_file.json["code"] == "document_indexing"
        queue = context_of(app).queue
        job = queue.claim()
        assert job is not None and job.document_id == document
        source = queue.source(job)
        data = source.content.read_bytes() if isinstance(source.content, Path) else source.content
        assert data.decode("utf-8") == GREEN
        info = context_of(app).kb.dataset(dataset).index_waiting(document, source=source)
        assert info.status == "completed" and info.error is None, info.error
    finally:
        context_of(app).close()


def test_an_accepted_update_keeps_only_the_new_upload(api: Api, home: Path) -> None:
    dataset = api.create_dataset()
    document = api.indexed_text(dataset, "green", GREEN)
    for name, text in (("green", OOLONG), ("oolong", GREEN)):
        updated = api.post(
            f"/v1/datasets/{dataset}/documents/{document}/update-by-text", json={"name": name, "text": text}
        )
        assert updated.status_code == 200, updated.json
        (status,) = api.wait(dataset, updated.json["batch"])
        assert status["indexing_status"] == "completed", status
        stored = [path for path in (home / "uploads" / document).rglob("*") if path.is_file()]
        assert [(path.name, path.read_text(encoding="utf-8")) for path in stored] == [(f"{name}.txt", text)]


def test_control_characters_leave_upload_names(api: Api, home: Path) -> None:
    dataset = api.create_dataset()
    response = api.post(
        f"/v1/datasets/{dataset}/document/create-by-file",
        data={"file": (io.BytesIO(GREEN.encode()), "green\x00\x07 tea\x1f.txt")},
    )
    assert response.status_code == 200, response.json
    document = response.json["document"]
    assert document["name"] == "green tea.txt"
    (status,) = api.wait(dataset, response.json["batch"])
    assert status["indexing_status"] == "completed", status
    assert [path.name for path in (home / "uploads" / document["id"]).iterdir()] == ["green tea.txt"]


@pytest.mark.parametrize(
    ("process_rule", "field"),
    [
        ({"max_tokens": 100, "chunk_overlap": 100}, "process_rule.chunk_overlap"),
        ({"max_tokens": 100, "chunk_overlap": 500}, "process_rule.chunk_overlap"),
        (
            {"mode": "custom", "rules": {"segmentation": {"max_tokens": 50, "chunk_overlap": 60}}},
            "process_rule.rules.segmentation.chunk_overlap",
        ),
        (
            {
                "mode": "hierarchical",
                "rules": {"subchunk_segmentation": {"max_tokens": 20, "chunk_overlap": 20}},
            },
            "process_rule.rules.subchunk_segmentation.chunk_overlap",
        ),
    ],
)
def test_an_overlap_not_smaller_than_the_chunk_is_refused(
    api: Api, process_rule: dict[str, object], field: str
) -> None:
    """An overlap of a whole chunk or more was clamped in silence (751 chunks instead of 13)."""
    dataset = api.create_dataset()
    response = api.post(
        f"/v1/datasets/{dataset}/document/create-by-text",
        json={"name": "green", "text": GREEN, "process_rule": process_rule},
    )
    assert response.status_code == 400 and response.json["code"] == "invalid_param", response.json
    assert field in response.json["message"] and "max_tokens" in response.json["message"]
    refused = api.post("/v1/datasets", json={"name": "overlap", "process_rule": process_rule})
    assert refused.status_code == 400 and field in refused.json["message"], refused.json
    # an overlap the request did not set is the rule's own, kept within the chunk as before
    small = api.post(
        f"/v1/datasets/{dataset}/document/create-by-text",
        json={"name": "small", "text": GREEN, "process_rule": {"max_tokens": 40}},
    )
    assert small.status_code == 200, small.json


def test_an_upload_of_content_already_held_follows_on_duplicate(api: Api) -> None:
    dataset = api.create_dataset()
    first = api.indexed_text(dataset, "green", GREEN)

    skipped = api.post(
        f"/v1/datasets/{dataset}/document/create-by-file",
        data={"file": (io.BytesIO(GREEN.encode()), "again.txt")},
    ).json
    assert skipped["duplicate"] == "skipped" and skipped["document"]["id"] == first
    assert skipped["document"]["name"] == "green" and skipped["document"]["indexing_status"] == "completed"
    (status,) = api.wait(dataset, skipped["batch"])  # a Dify client polls it as any upload's
    assert status["id"] == first and status["indexing_status"] == "completed"

    by_text = api.post(
        f"/v1/datasets/{dataset}/document/create-by-text", json={"name": "same", "text": GREEN}
    ).json
    assert by_text["duplicate"] == "skipped" and by_text["document"]["id"] == first

    replaced = api.post(
        f"/v1/datasets/{dataset}/document/create-by-file",
        data={"file": (io.BytesIO(GREEN.encode()), "renamed.txt"), "data": '{"on_duplicate": "replace"}'},
    ).json
    assert replaced["duplicate"] == "replaced" and replaced["document"]["id"] == first
    api.wait(dataset, replaced["batch"])
    assert api.get(f"/v1/datasets/{dataset}/documents/{first}").json["name"] == "renamed.txt"

    kept, _ = api.add_text(dataset, "both", GREEN, on_duplicate="keep")
    assert kept != first
    listed = api.get(f"/v1/datasets/{dataset}/documents").json
    assert listed["total"] == 2

    refused = api.post(
        f"/v1/datasets/{dataset}/document/create-by-text",
        json={"name": "x", "text": GREEN, "on_duplicate": "overwrite"},
    )
    assert refused.status_code == 400 and refused.json["code"] == "invalid_param"
    assert "on_duplicate" in refused.json["message"]


def test_failed_content_is_no_duplicate(api: Api) -> None:
    dataset = api.create_dataset()
    document, batch = api.add_text(dataset, "blank", "   \n\n   ")
    api.wait(dataset, batch)
    again, _ = api.add_text(dataset, "blank", "   \n\n   ")
    assert again != document
