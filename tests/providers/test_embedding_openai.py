"""OpenAICompatibleEmbedding against a real HTTP server on 127.0.0.1 that speaks /v1/embeddings."""

from __future__ import annotations

import hashlib
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from zhiku.core.errors import ModelUnavailable
from zhiku.core.secrets import Secret
from zhiku.providers.embedding import create_embedding_model
from zhiku.providers.embedding.openai_compatible import OpenAICompatibleEmbedding

DIM = 8
API_KEY = "sk-test-7f3a9"


def fake_vector(text: str) -> list[float]:
    """A deterministic, deliberately unnormalised vector per text."""
    seed = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)
    return (np.random.default_rng(seed).normal(size=DIM) * 3).tolist()


@dataclass
class Scripted:
    """What the server answers before it starts answering normally."""

    failures: list[tuple[int, str, dict[str, str]]] = field(default_factory=list)
    requests: list[dict[str, object]] = field(default_factory=list)
    drop_one: bool = False


class EmbeddingsServer(ThreadingHTTPServer):
    script: Scripted


class Handler(BaseHTTPRequestHandler):
    server: EmbeddingsServer

    def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        script = self.server.script
        script.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        if self.path != "/v1/embeddings":
            return self.reply(404, json.dumps({"error": "not found"}))
        if script.failures:
            status, text, headers = script.failures.pop(0)
            return self.reply(status, text, headers)
        inputs = body["input"][1:] if script.drop_one else body["input"]
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(inputs)
        ]
        data.reverse()  # an answer need not be in input order; "index" says where each row goes
        self.reply(200, json.dumps({"object": "list", "data": data, "model": body["model"]}))
        return None

    def reply(self, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        payload = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    httpd = EmbeddingsServer(("127.0.0.1", 0), Handler)
    httpd.script = Scripted()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def make(server: EmbeddingsServer, **options: object) -> OpenAICompatibleEmbedding:
    settings: dict[str, object] = {"retry_backoff": 0.01, "timeout": 5, **options}
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    return OpenAICompatibleEmbedding(base_url, "fake-embed", **settings)  # type: ignore[arg-type]


def expected(texts: list[str]) -> np.ndarray:
    rows = np.array([fake_vector(t) for t in texts], dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_batches_reorder_by_index_and_learn_dim(server: EmbeddingsServer) -> None:
    texts = [f"段落 {i}" for i in range(5)]
    model = create_embedding_model(
        "openai",
        base_url=f"http://127.0.0.1:{server.server_address[1]}/v1/",
        model="fake-embed",
        batch_size=2,
    )
    seen: list[tuple[int, int]] = []
    rows = model.embed_documents(texts, on_progress=lambda d, t: seen.append((d, t)))

    np.testing.assert_allclose(rows, expected(texts), atol=1e-6)
    assert rows.dtype == np.float32
    assert [len(r["input"]) for r in server.script.requests] == [2, 2, 1]  # type: ignore[arg-type]
    assert {r["path"] for r in server.script.requests} == {"/v1/embeddings"}
    assert {r["model"] for r in server.script.requests} == {"fake-embed"}
    assert seen == [(2, 5), (4, 5), (5, 5)]
    assert model.dim == DIM and len(server.script.requests) == 3
    assert model.name == f"openai/127.0.0.1:{server.server_address[1]}/fake-embed"
    np.testing.assert_allclose(model.embed_query("段落 3"), expected(["段落 3"])[0], atol=1e-6)


def test_dim_is_probed_when_unknown(server: EmbeddingsServer) -> None:
    assert make(server).dim == DIM
    assert len(server.script.requests) == 1
    assert make(server, dim=DIM).dim == DIM
    assert len(server.script.requests) == 1


def test_a_500_is_retried(server: EmbeddingsServer) -> None:
    server.script.failures = [(500, '{"error": "overloaded"}', {}), (429, "slow down", {"Retry-After": "0"})]
    rows = make(server).embed_documents(["a", "b"])
    np.testing.assert_allclose(rows, expected(["a", "b"]), atol=1e-6)
    assert len(server.script.requests) == 3


def test_a_400_fails_at_once_with_status_and_body(server: EmbeddingsServer) -> None:
    server.script.failures = [(400, '{"error": {"message": "input must not be empty"}}', {})]
    with pytest.raises(ModelUnavailable, match=r"answered 400: .*input must not be empty"):
        make(server).embed_documents([""])
    assert len(server.script.requests) == 1


def test_retries_are_bounded(server: EmbeddingsServer) -> None:
    server.script.failures = [(503, "down", {})] * 5
    with pytest.raises(ModelUnavailable, match=r"503: down \(after 3 tries\)"):
        make(server, max_retries=2).embed_query("x")
    assert len(server.script.requests) == 3


def test_unreachable_endpoint() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAICompatibleEmbedding(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, retry_backoff=0.01)
    with pytest.raises(ModelUnavailable, match=r"unreachable.*after 2 tries"):
        model.embed_query("x")


def test_wrong_number_of_vectors_is_an_error(server: EmbeddingsServer) -> None:
    server.script.drop_one = True
    with pytest.raises(ModelUnavailable, match="1 vectors for 2 inputs"):
        make(server).embed_documents(["a", "b"])


def test_api_key_is_sent_but_never_shown(server: EmbeddingsServer) -> None:
    model = make(server, api_key=API_KEY)
    model.embed_query("hi")
    assert server.script.requests[-1]["auth"] == f"Bearer {API_KEY}"
    assert API_KEY not in repr(model) and API_KEY not in str(vars(model))

    server.script.failures = [(401, f'{{"error": "invalid key {API_KEY}"}}', {})]
    with pytest.raises(ModelUnavailable) as caught:
        model.embed_query("hi")
    assert "401" in str(caught.value) and API_KEY not in str(caught.value)

    make(server, api_key=Secret(API_KEY)).embed_query("hi")
    assert server.script.requests[-1]["auth"] == f"Bearer {API_KEY}"
    make(server).embed_query("hi")
    assert server.script.requests[-1]["auth"] is None
