"""``zhiku serve`` as a real process on 127.0.0.1: upload a PDF and a DOCX, poll to completed,
retrieve; then SIGKILL the server while a large document is being indexed and show that after a
restart the document is never served half-indexed and ends completed."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import UNDER_WAY
from tests.fixtures.make_files import make_docx, make_pdf

IN_PROGRESS = ("waiting", "parsing", "cleaning", "splitting", "indexing")
DIFY_FILE_DATA = {"indexing_technique": "high_quality", "process_rule": {"mode": "automatic"}}


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "zhiku.cli", "--home", str(home), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


class Server:
    """A ``zhiku serve`` child process on a free port (``--port 0``, the address read from its output)."""

    def __init__(self, home: Path) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "ZHIKU_INDEXING_WORKERS": "1"}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "zhiku.cli",
                "--home",
                str(home),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        deadline = time.monotonic() + 120
        while True:
            line = self.process.stdout.readline()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
            if match:
                self.url = f"http://127.0.0.1:{match.group(1)}/v1"
                break
            assert line and time.monotonic() < deadline, f"server did not start: {line!r}"

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / "home"


def _client(server: Server, key: str) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {key}"}, timeout=60)


def _status(client: httpx.Client, dataset: str, batch: str) -> dict[str, Any]:
    response = client.get(f"/datasets/{dataset}/documents/{batch}/indexing-status")
    assert response.status_code == 200, response.text
    return response.json()["data"][0]  # type: ignore[no-any-return]


def _wait(client: httpx.Client, dataset: str, batch: str, timeout: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (status := _status(client, dataset, batch))["indexing_status"] in IN_PROGRESS:
        assert time.monotonic() < deadline, status
        time.sleep(0.1)
    return status


def test_serve_upload_index_retrieve_and_survive_a_kill(home: Path, tmp_path: Path) -> None:
    _cli(home, "init")
    key = _cli(home, "apikey", "create", "--name", "e2e").stdout.strip()
    pdf = make_pdf(
        tmp_path / "tea.pdf",
        ["普洱茶适合长期存放，需要通风并避免阳光直射。", "Green tea is brewed at 80 degrees."],
    )
    docx = make_docx(
        tmp_path / "ship.docx", sections=[("Shipping", ["Orders placed before 4 pm ship the same day."])]
    )

    server = Server(home)
    try:
        with _client(server, key) as client:
            assert httpx.get(f"{server.url}/datasets").status_code == 401
            dataset = client.post("/datasets", json={"name": "e2e", "embedding_model": "use"}).json()["id"]
            batches = []
            for path in (pdf, docx):
                with path.open("rb") as handle:
                    created = client.post(
                        f"/datasets/{dataset}/document/create-by-file",
                        files={"file": (path.name, handle)},
                        data={"data": json.dumps(DIFY_FILE_DATA)},
                    )
                assert created.status_code == 200, created.text
                assert created.json()["document"]["indexing_status"] in UNDER_WAY
                batches.append(created.json()["batch"])
            for batch in batches:
                assert _wait(client, dataset, batch)["indexing_status"] == "completed"
            hits = client.post(f"/datasets/{dataset}/retrieve", json={"query": "普洱茶怎么存放"}).json()[
                "records"
            ]
            assert "普洱茶适合长期存放" in hits[0]["segment"]["content"]
            assert hits[0]["segment"]["document"]["name"] == "tea.pdf"
            hits = client.post(f"/datasets/{dataset}/retrieve", json={"query": "when do orders ship"}).json()
            assert "4 pm" in hits["records"][0]["segment"]["content"]

            paragraphs = [
                f"Tea note {n}: leaf batch {n} from garden {n % 97} was rolled and dried."
                for n in range(2500)
            ]
            paragraphs.append("The quokka blend closes the ledger.")
            large = client.post(
                f"/datasets/{dataset}/document/create-by-text",
                json={
                    "name": "ledger",
                    "text": "\n\n".join(paragraphs),
                    "process_rule": {"max_tokens": 32, "chunk_overlap": 0},
                },
            ).json()
            document, batch = large["document"]["id"], large["batch"]
            deadline = time.monotonic() + 120
            while _status(client, dataset, batch)["indexing_status"] != "indexing":
                assert time.monotonic() < deadline
                time.sleep(0.05)
            time.sleep(0.5)
        server.kill()

        server = Server(home)
        with _client(server, key) as client:
            seen = []
            while True:
                status = _status(client, dataset, batch)
                seen.append(status["indexing_status"])
                segments = client.get(f"/datasets/{dataset}/documents/{document}/segments?limit=1").json()[
                    "total"
                ]
                found = client.post(
                    f"/datasets/{dataset}/retrieve",
                    json={"query": "quokka blend", "retrieval_model": {"search_method": "full_text_search"}},
                ).json()["records"]
                served = [r for r in found if r["segment"]["document"]["id"] == document]
                if _status(client, dataset, batch)["indexing_status"] != status["indexing_status"]:
                    continue  # the commit fell between the reads: they see different versions
                if status["indexing_status"] != "completed":
                    assert status["indexing_status"] in IN_PROGRESS, status
                    assert segments == 0 and served == [], (status, segments)
                else:
                    assert segments == status["total_segments"] == status["completed_segments"] > 1000
                    assert served and "quokka" in served[0]["segment"]["content"]
                    break
                time.sleep(0.2)
            assert seen[0] in IN_PROGRESS  # the kill did interrupt the indexing
            assert _status(client, dataset, batches[0])["indexing_status"] == "completed"
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("request_line", "message"),
    [
        ("GET /v1/datasets?keyword=加班 HTTP/1.1", "Bad URI: percent-encode"),
        ("GARBAGE\x01 / HTTP/1.1", "Start line is invalid"),
    ],
)
def test_a_request_the_server_cannot_parse_gets_the_json_error_shape(
    home: Path, request_line: str, message: str
) -> None:
    _cli(home, "init")
    server = Server(home)
    try:
        port = int(server.url.rsplit(":", 1)[1].split("/")[0])
        with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
            connection.sendall(request_line.encode() + b"\r\nHost: x\r\nConnection: close\r\n\r\n")
            raw = b""
            while chunk := connection.recv(65536):
                raw += chunk
        head, _, body = raw.partition(b"\r\n\r\n")
        assert b" 400 " in head.split(b"\r\n")[0] and b"application/json" in head
        error = json.loads(body)
        assert error["code"] == "bad_request" and error["status"] == 400
        assert error["message"].startswith(message)
    finally:
        server.stop()
