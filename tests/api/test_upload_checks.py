"""Files no extractor will read are refused when they are sent, the same way through the API as
in the console: an empty file (400 ``extraction_error``), a suffix no extractor declares and
binary bytes under a text format's suffix (415 ``unsupported_file_type``), each naming the file
and the reason; nothing of them is queued. A text file without a suffix is still read. A file
previewed (``preview-by-file``) shows the segments it would make, and nothing is stored."""

from __future__ import annotations

import io
import os

from tests.api.conftest import Api

GREEN = "Longjing is a green tea from Hangzhou, brewed at 80 degrees."


def _upload(api: Api, dataset: str, name: str, data: bytes):  # type: ignore[no-untyped-def]
    return api.post(
        f"/v1/datasets/{dataset}/document/create-by-file", data={"file": (io.BytesIO(data), name)}
    )


def test_files_no_extractor_reads_are_refused_when_sent(api: Api) -> None:
    dataset = api.create_dataset()
    photo = os.urandom(4096).replace(b"\n", b"\x00")
    refused = {
        "empty.md": (b"", 400, "extraction_error", "empty file"),
        "blank.txt": (b" \n\n ", 400, "extraction_error", "empty file"),
        "photo.txt": (photo, 415, "unsupported_file_type", "binary content"),
        "notes.xyz": (GREEN.encode(), 415, "unsupported_file_type", "no reader for this kind of file"),
    }
    for name, (data, status, code, reason) in refused.items():
        response = _upload(api, dataset, name, data)
        assert response.status_code == status, (name, response.json)
        assert response.json["code"] == code and name in response.json["message"], response.json
        assert reason in response.json["message"], response.json
    listed = api.get(f"/v1/datasets/{dataset}/documents").json
    assert listed["total"] == 0
    for name in ("green.txt", "README"):
        accepted = _upload(api, dataset, name, GREEN.encode() + name.encode())
        assert accepted.status_code == 200, accepted.json
        (status,) = api.wait(dataset, accepted.json["batch"])
        assert status["indexing_status"] == "completed"


def test_a_documents_hit_count_sums_its_segments_hits(api: Api) -> None:
    dataset = api.create_dataset()
    document, batch = api.add_text(dataset, "green", GREEN)
    api.wait(dataset, batch)
    search = {"query": "Longjing Hangzhou", "retrieval_model": {"search_method": "full_text_search"}}
    for _ in range(2):
        assert api.post(f"/v1/datasets/{dataset}/retrieve", json=search).json["records"]
    listed = api.get(f"/v1/datasets/{dataset}/documents").json["data"]
    assert [(item["id"], item["hit_count"]) for item in listed] == [(document, 2)]


def test_preview_by_file_shows_the_segments_and_stores_nothing(api: Api) -> None:
    dataset = api.create_dataset(process_rule={"max_tokens": 40, "chunk_overlap": 0})
    text = "\n\n".join(f"Paragraph {n}: " + "the tea leaves are picked and withered " * 3 for n in range(4))
    path = f"/v1/datasets/{dataset}/document/preview-by-file"
    response = api.post(path, data={"file": (io.BytesIO(text.encode()), "long.txt")})
    assert response.status_code == 200, response.json
    body = response.json
    assert body["total_segments"] == len(body["preview"]) >= 4
    assert body["preview"][0]["content"].startswith("Paragraph 0:")
    assert all(0 < item["tokens"] <= 40 and item["child_chunks"] == [] for item in body["preview"])
    refused = api.post(path, data={"file": (io.BytesIO(b""), "empty.md")})
    assert refused.status_code == 400 and refused.json["code"] == "extraction_error"
    assert api.get(f"/v1/datasets/{dataset}/documents").json["total"] == 0
