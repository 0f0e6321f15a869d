"""Files no extractor will read are refused when they are sent, the same way through the API as
in the console: an empty file (400 ``extraction_error``), a suffix no extractor declares and
binary bytes under a text format's suffix (415 ``unsupported_file_type``), each naming the file
and the reason; nothing of them is queued. A text file without a suffix is still read. A file
previewed (``preview-by-file``) shows the segments it would make, and nothing is stored.
``zhiku ingest`` through a running server reports a refused file as it reports one it cannot
read without a server, and goes on with the rest."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.api.conftest import Api
from tests.api.test_server import Server, _cli

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


def test_ingest_through_a_running_server_reports_refused_files_and_goes_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cli(home, "init")
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "green.txt").write_text(GREEN, encoding="utf-8")
    (folder / "empty.md").write_bytes(b"")
    (folder / "notes.xyz").write_text("Notes in a format no reader knows.", encoding="utf-8")
    server = Server(home)
    try:
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "zhiku.cli",
                "--home",
                str(home),
                "ingest",
                str(folder),
                "--dataset",
                "tea",
            ]
            + ["--create"],
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        server.process.send_signal(signal.SIGTERM)
        server.process.communicate(timeout=60)
    assert "Traceback" not in run.stderr, run.stderr
    assert run.returncode == 1 and "through zhiku serve" in run.stdout, (run.stdout, run.stderr)
    assert "empty.md: " in run.stdout and "empty file" in run.stdout, run.stdout
    assert "notes.xyz: " in run.stdout and "no reader for this kind of file" in run.stdout, run.stdout
    assert "completed green.txt" in run.stdout and "1 indexed, 2 failed" in run.stdout, run.stdout
