"""Schemathesis against ``/v1/openapi.json`` of a live ``zhiku serve`` on 127.0.0.1, plus the
bad inputs of the reliability list sent by hand.

Schemathesis's own command (``st run``) generates the requests: valid and invalid ones, the
boundary values of its coverage phase, and chains of calls in its stateful phase. Every answer
must be no 5xx, a status and a body the document describes, and, for an error, JSON
``{"code", "message", "status"}`` with ``status`` equal to the HTTP status (:func:`error_body`,
loaded by ``st`` from this module). Path parameters are real ids most of the time, so requests
get past the 404s into the views; deletions and re-uploads get ids of their own, so they do not
take the other operations' data away.

``ZHIKU_FUZZ_EXAMPLES`` (default 5) bounds the generated examples per operation and phase,
``ZHIKU_FUZZ_SEED`` (default 0) picks them and ``ZHIKU_FUZZ_PHASES`` names the phases (default
all but ``coverage``, whose boundary values run to thousands of requests whatever the bound);
``make fuzz`` runs every phase, more examples and a new seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis

from zhiku.api.local_server import LocalServer

pytestmark = pytest.mark.reliability

EXAMPLES = int(os.environ.get("ZHIKU_FUZZ_EXAMPLES", "5"))
SEED = int(os.environ.get("ZHIKU_FUZZ_SEED", "0"))
PHASES = os.environ.get("ZHIKU_FUZZ_PHASES", "examples,fuzzing,stateful")
#: How often a path parameter is a real id rather than generated text.
REAL_ID_PROBABILITY = 0.8
REPO = Path(__file__).resolve().parents[2]
TEA = "\n\n".join(
    [
        "# 青山茶园\n\n龙井茶需要用八十度的水冲泡，避免烫伤茶叶。",
        "普洱茶适合长期存放，需要通风并避免阳光直射。",
        "Green tea is brewed at 80 degrees; black tea at 95.",
    ]
)
SHIPPING = "Orders placed before 4 pm ship the same day.\n\n下单后两个工作日内发货。"
CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "ignored_auth",
    "error_body",
)


@dataclass(frozen=True)
class Ids:
    """Data made before fuzzing: ``dataset`` with ``document`` (indexed, its ``segments`` and
    ``batch``) for reads and edits; ``mutable`` for re-uploads, pauses and status changes;
    ``failed`` (a corrupt PDF) for retries; ``spare_*`` for deletions."""

    dataset: str
    document: str
    batch: str
    segments: tuple[str, ...]
    mutable: str
    failed: str
    spare_dataset: str
    spare_document: str
    spare_segment: str


@schemathesis.check
def error_body(ctx: Any, response: Any, case: Any) -> None:
    """An error is JSON ``{"code", "message", "status"}`` whose status is the response's."""
    if response.status_code < 400:
        return
    body = json.loads(response.content)
    assert isinstance(body, dict), body
    assert isinstance(body.get("code"), str) and body["code"], body
    assert isinstance(body.get("message"), str) and body["message"], body
    assert body.get("status") == response.status_code, body


def _wait(client: httpx.Client, dataset: str, batch: str) -> str:
    """The final status of a one-document batch."""
    deadline = time.monotonic() + 120
    while True:
        response = client.get(f"/datasets/{dataset}/documents/{batch}/indexing-status")
        response.raise_for_status()
        (state,) = [item["indexing_status"] for item in response.json()["data"]]
        if state in ("completed", "error"):
            return state  # type: ignore[no-any-return]
        assert time.monotonic() < deadline, state
        time.sleep(0.1)


def _seed_data(server: LocalServer) -> Ids:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:

        def create(path: str, payload: dict[str, Any]) -> dict[str, Any]:
            response = client.post(path, json=payload)
            assert response.status_code == 200, response.text
            return response.json()  # type: ignore[no-any-return]

        dataset = create("/datasets", {"name": "fuzz"})["id"]
        spare_dataset = create("/datasets", {"name": "fuzz-spare"})["id"]
        # spare.txt holds shipping.txt's text: kept as a second document, not skipped as a duplicate
        queued = {
            name: create(
                f"/datasets/{dataset}/document/create-by-text",
                {"name": name, "text": text, "on_duplicate": "keep"},
            )
            for name, text in (("tea.md", TEA), ("shipping.txt", SHIPPING), ("spare.txt", SHIPPING))
        }
        for item in queued.values():
            assert _wait(client, dataset, item["batch"]) == "completed"
        broken = client.post(
            f"/datasets/{dataset}/document/create-by-file",
            files={"file": ("broken.pdf", b"%PDF-1.7\n1 0 obj <<")},
            data={"data": "{}"},
        )
        assert broken.status_code == 200, broken.text
        assert _wait(client, dataset, broken.json()["batch"]) == "error"
        document = queued["tea.md"]["document"]["id"]
        segments = client.get(f"/datasets/{dataset}/documents/{document}/segments").json()["data"]
        spare_segment = create(
            f"/datasets/{dataset}/documents/{document}/segments", {"segments": [{"content": "备用片段"}]}
        )["data"][0]["id"]
        return Ids(
            dataset=dataset,
            document=document,
            batch=queued["tea.md"]["batch"],
            segments=tuple(segment["id"] for segment in segments),
            mutable=queued["shipping.txt"]["document"]["id"],
            failed=broken.json()["document"]["id"],
            spare_dataset=spare_dataset,
            spare_document=queued["spare.txt"]["document"]["id"],
            spare_segment=spare_segment,
        )


def _real(dictionary: str) -> dict[str, Any]:
    return {"dictionary": dictionary, "probability": REAL_ID_PROBABILITY}


def _config(server: LocalServer, ids: Ids, report: Path) -> dict[str, Any]:
    """``schemathesis.toml`` for this run."""
    return {
        "seed": SEED,
        "hooks": __name__,
        "workers": 1,
        "request-timeout": 60,
        "headers": server.headers,
        "generation": {"max-examples": EXAMPLES, "database": "none"},
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        "reports": {"json": {"enabled": True, "path": str(report)}},
        "dictionaries": {
            "dataset": {"values": [ids.dataset]},
            "document": {"values": [ids.document]},
            "segment": {"values": list(ids.segments)},
            "batch": {"values": [ids.batch]},
            "mutable": {"values": [ids.mutable, ids.failed]},
            "spare_dataset": {"values": [ids.spare_dataset]},
            "spare_document": {"values": [ids.spare_document]},
            "spare_segment": {"values": [ids.spare_segment]},
        },
        "parameters": {
            "path.dataset_id": _real("dataset"),
            "path.document_id": _real("document"),
            "path.segment_id": _real("segment"),
            "path.batch": _real("batch"),
            "body.document_ids[*]": _real("mutable"),
        },
        "operations": [
            {
                "include-method": "DELETE",
                "include-path": "/v1/datasets/{dataset_id}",
                "parameters": {"path.dataset_id": _real("spare_dataset")},
            },
            {
                "include-method": "DELETE",
                "include-path": "/v1/datasets/{dataset_id}/documents/{document_id}",
                "parameters": {"path.document_id": _real("spare_document")},
            },
            {
                "include-method": "DELETE",
                "include-path-regex": "/segments/",
                "parameters": {"path.segment_id": _real("spare_segment")},
            },
            {
                "include-path-regex": "/(update[-_]by|processing/)",
                "parameters": {"path.document_id": _real("mutable")},
            },
        ],
    }


def _toml(config: dict[str, Any]) -> str:
    """TOML of plain data, every table inline (JSON strings and numbers are TOML ones too)."""

    def value(item: Any) -> str:
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, dict):
            return "{" + ", ".join(f"{json.dumps(key)} = {value(v)}" for key, v in item.items()) + "}"
        if isinstance(item, list | tuple):
            return "[" + ", ".join(value(v) for v in item) + "]"
        return json.dumps(item, ensure_ascii=False)

    return "".join(f"{json.dumps(key)} = {value(item)}\n" for key, item in config.items())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    home = tmp_path_factory.mktemp("fuzz") / "home"
    with LocalServer(home, env={"ZHIKU_EMBEDDING_MODEL": "use", "ZHIKU_INDEXING_WORKERS": "1"}) as served:
        yield served


@pytest.fixture(scope="module")
def ids(server: LocalServer) -> Ids:
    return _seed_data(server)


def _json_error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == status and body["code"] and body["message"], body
    return body


def test_bad_inputs_get_clear_errors(server: LocalServer, ids: Ids) -> None:
    """Wrong JSON types, huge ``top_k``, empty and 100k-character queries: 400 naming the field."""
    retrieve = f"/datasets/{ids.dataset}/retrieve"
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        for path, payload, field in [
            ("/datasets", {"name": 5}, "name"),
            ("/datasets", [], "body"),
            (retrieve, {"query": ["tea"]}, "query"),
            (retrieve, {"query": "tea", "retrieval_model": {"top_k": "many"}}, "top_k"),
            (retrieve, {"query": "tea", "retrieval_model": {"weights": [0.5]}}, "weights"),
            (retrieve, {"query": "tea", "retrieval_model": {"top_k": 10**9}}, "top_k"),
            (retrieve, {"query": "tea", "retrieval_model": {"weights": {}, "top_k": 10**9}}, "top_k"),
            ("/retrieve", {"query": "tea", "top_k": 10**6}, "top_k"),
            (retrieve, {"query": ""}, "query"),
            (retrieve, {"query": "茶" * 100_000}, "query"),
            (f"/datasets/{ids.dataset}/documents/{ids.document}/segments", {"segments": {}}, "segments"),
        ]:
            body = _json_error(client.post(path, json=payload), 400)
            assert body["code"] == "invalid_param" and field in body["message"], (payload, body)
        assert client.post(retrieve, json={"query": "   "}).status_code == 200
        hits = client.post(
            retrieve,
            json={"query": "茶", "retrieval_model": {"top_k": 1000, "score_threshold_enabled": False}},
        )
        assert hits.status_code == 200 and hits.json()["records"]


def test_what_fuzzing_found_answers_4xx(server: LocalServer, ids: Ids) -> None:
    """Requests that were answered 500 before: Dify weights of the wrong shape, a page past
    SQLite's integers, a rename onto another dataset's name, a model the API cannot build."""
    retrieve = f"/datasets/{ids.dataset}/retrieve"
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        dify = {"query": "tea", "retrieval_model": {"weights": {"vector_setting": {"vector_weight": None}}}}
        _json_error(client.post(retrieve, json=dify), 400)
        _json_error(client.get("/datasets", params={"page": 10**30}), 400)
        taken = client.post("/datasets", json={"name": "taken"}).json()["id"]
        renamed = client.patch(f"/datasets/{taken}", json={"name": "fuzz"})
        assert _json_error(renamed, 409)["code"] == "already_exists"
        for model in ("transformers", "openai"):
            created = client.post("/datasets", json={"name": f"needs-{model}", "embedding_model": model})
            assert "cannot pass" in _json_error(created, 400)["message"]


def test_plugin_names_from_requests_are_never_imported(server: LocalServer, ids: Ids, tmp_path: Path) -> None:
    """A dotted path given as a plugin name would be imported and called by the registries."""
    marker = tmp_path / "ran"
    retrieve = f"/datasets/{ids.dataset}/retrieve"
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        for path, payload in [
            (
                retrieve,
                {"query": "q", "retrieval_model": {"reranking": {"model": f"os.system:touch {marker}"}}},
            ),
            (
                retrieve,
                {
                    "query": "q",
                    "retrieval_model": {
                        "reranking_enable": True,
                        "reranking_model": {"reranking_model_name": f"os.system:touch {marker}"},
                    },
                },
            ),
            ("/datasets", {"name": "evil", "embedding_model": "os:getcwd"}),
            ("/datasets", {"name": "evil", "process_rule": {"doc_form": "os:getcwd"}}),
            ("/datasets", {"name": "evil", "process_rule": {"cleaners": ["os:getcwd"]}}),
        ]:
            body = _json_error(client.post(path, json=payload), 400)
            assert "unknown" in body["message"] or "not supported" in body["message"], body
    assert not marker.exists()


@pytest.mark.parametrize("name", ["../../escape.txt", "..", "../茶 ☕ notes.md", "a/../../b.txt"])
def test_odd_file_names_stay_in_the_upload_directory(server: LocalServer, ids: Ids, name: str) -> None:
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=60) as client:
        response = client.post(
            f"/datasets/{ids.dataset}/document/create-by-file",
            files={"file": (name, "普洱茶 pu-erh tea\n".encode())},
            data={"data": '{"on_duplicate": "keep"}'},  # the same content under each odd name
        )
        assert response.status_code == 200, response.text
        assert _wait(client, ids.dataset, response.json()["batch"]) == "completed"
    uploads = server.home / "uploads"
    assert not list(server.home.parent.glob("*escape*")) and not list(server.home.glob("*escape*"))
    assert all(path.resolve().is_relative_to(uploads.resolve()) for path in uploads.rglob("*"))


def test_generated_requests_get_documented_answers(
    server: LocalServer, ids: Ids, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "report.json"
    config = tmp_path / "schemathesis.toml"
    config.write_text(_toml(_config(server, ids, report)), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "--no-color", "run"]
        + [f"{server.url}/openapi.json", "--phases", PHASES],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
        },
        timeout=3600,
    )
    assert report.is_file(), f"schemathesis did not run:\n{run.stdout[-5000:]}\n{run.stderr[-5000:]}"
    summary = json.loads(report.read_text(encoding="utf-8"))
    cases = summary["test_cases"]
    line = (
        f"API fuzzing: {cases['generated']} requests over {summary['operations']['tested']} operations "
        f"(phases {PHASES}, at most {EXAMPLES} generated per operation and phase, seed {SEED}): "
        f"{cases['with_failures']} failed, {len(summary['errors'])} errors"
    )
    with capsys.disabled():
        print(f"\n{line}")
    assert run.returncode == 0 and not summary["failures"], (
        f"{line}\n{run.stdout[-20000:]}\n{run.stderr[-5000:]}"
    )
    assert summary["operations"]["tested"] == summary["operations"]["total"], summary["operations"]
