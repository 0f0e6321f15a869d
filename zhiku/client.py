"""Commands run beside a ``zhiku serve`` on the same data directory go through its HTTP API.

The server owns the embedded stores (one writer), so ``zhiku search`` and ``zhiku ingest`` ask it
instead of opening them, authenticated by the token the server left in ``<home>/server.json``
(see :mod:`zhiku.core.server_file`). Other commands that need the stores say which server owns
them.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zhiku.core.config import Settings
from zhiku.core.documents import Hit
from zhiku.core.errors import NotFound, StoreBusy, ZhikuError
from zhiku.core.server_file import ServerInfo, read_server_file

if TYPE_CHECKING:
    import httpx

#: Seconds to wait for the server to index what a forwarded ``ingest`` uploaded.
INGEST_WAIT_SECONDS = 6 * 3600
POLL_SECONDS = 0.5
PAGE = 100


def running_server(home: Path | None) -> ServerInfo | None:
    """The server serving ``home`` (default: ``ZHIKU_HOME`` or ``~/.zhiku``), if one runs."""
    return read_server_file(Settings.load(home).home)


class ServerClient:
    """The few API calls the forwarded commands make, errors raised as zhiku's own."""

    def __init__(self, server: ServerInfo, *, timeout: float = 120.0) -> None:
        self.url = server.url
        self.pid = server.pid
        import httpx  # only when a server runs: a local command never loads the HTTP client

        self._http = httpx.Client(
            base_url=server.url, headers={"Authorization": f"Bearer {server.token}"}, timeout=timeout
        )

    def __enter__(self) -> ServerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def dataset_id(self, name_or_id: str, *, create: bool = False) -> str:
        response = self._http.get(f"/datasets/{name_or_id}")
        if response.status_code == 404 and create:
            return str(self._json(self._http.post("/datasets", json={"name": name_or_id}))["id"])
        return str(self._json(response)["id"])

    def search(self, dataset: str, query: str, override: dict[str, Any]) -> list[Hit]:
        body: dict[str, Any] = {"query": query}
        if override:
            body["retrieval_model"] = override
        records = self._json(self._http.post(f"/datasets/{dataset}/retrieve", json=body))["records"]
        return [remote_hit(record) for record in records]

    def retrieve(self, query: str, datasets: Sequence[str] | None, options: dict[str, Any]) -> dict[str, Any]:
        body = {"query": query, **options, **({"datasets": list(datasets)} if datasets else {})}
        return dict(self._json(self._http.post("/retrieve", json=body)))

    def kb_search(self, args: dict[str, Any]) -> dict[str, Any]:
        return dict(self._json(self._http.post("/kb-search", json=args)))

    def datasets(self) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        page = 1
        while True:
            data = self._json(self._http.get("/datasets", params={"page": page, "limit": PAGE}))
            found.extend(data["data"])
            if not data.get("has_more"):
                return found
            page += 1

    def content_hashes(self, dataset_id: str) -> dict[str, str]:
        """content hash → document id of the dataset's documents that are not in error."""
        found: dict[str, str] = {}
        page = 1
        while True:
            data = self._json(
                self._http.get(f"/datasets/{dataset_id}/documents", params={"page": page, "limit": PAGE})
            )
            for document in data["data"]:
                if document.get("content_hash") and document["indexing_status"] != "error":
                    found.setdefault(document["content_hash"], document["id"])
            if not data.get("has_more"):
                return found
            page += 1

    def upload(self, dataset_id: str, path: Path, *, replace: str | None = None) -> tuple[str, str]:
        """Upload ``path`` (as a new document, or re-indexing ``replace``); (document id, batch).
        The caller has already decided about duplicates, so the server keeps what it is sent."""
        target = (
            f"/datasets/{dataset_id}/documents/{replace}/update-by-file"
            if replace
            else f"/datasets/{dataset_id}/document/create-by-file"
        )
        with path.open("rb") as handle:
            files = {"file": (path.name, handle)}
            fields = {"name": path.name} if replace else {"name": path.name, "on_duplicate": "keep"}
            data = {"data": json.dumps(fields)}
            answer = self._json(self._http.post(target, files=files, data=data))
        return str(answer["document"]["id"]), str(answer["batch"])

    def wait(self, dataset_id: str, batches: Sequence[str]) -> list[dict[str, Any]]:
        """The final indexing status of every document of ``batches``, once none is running."""
        deadline = time.monotonic() + INGEST_WAIT_SECONDS
        while True:
            statuses = [
                status
                for batch in batches
                for status in self._json(
                    self._http.get(f"/datasets/{dataset_id}/documents/{batch}/indexing-status")
                )["data"]
            ]
            if all(s["indexing_status"] in ("completed", "error", "paused") for s in statuses):
                return statuses
            if time.monotonic() > deadline:
                raise ZhikuError(f"the server at {self.url} is still indexing after {INGEST_WAIT_SECONDS} s")
            time.sleep(POLL_SECONDS)

    def document(self, dataset_id: str, document_id: str) -> dict[str, Any]:
        return dict(self._json(self._http.get(f"/datasets/{dataset_id}/documents/{document_id}")))

    def _json(self, response: httpx.Response) -> Any:
        if response.is_success:
            return response.json()
        try:
            error = response.json()
            message, code = str(error.get("message")), str(error.get("code"))
        except ValueError:
            message, code = response.text[:300], "error"
        if response.status_code == 404:
            raise NotFound(message)
        if code in UploadRefused.codes:
            raise UploadRefused(message)
        if response.status_code == 503 and code == "store_busy":
            raise StoreBusy(message)
        raise ZhikuError(f"the server at {self.url} answered {response.status_code}: {message}")


class UploadRefused(ZhikuError):
    """The server refused a file as it was sent: empty, or no extractor reads it (the message
    names the file and why); nothing of it was queued."""

    code = "upload_refused"
    codes = frozenset({"extraction_error", "unsupported_file_type"})


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def remote_hit(record: dict[str, Any]) -> Hit:
    segment = record["segment"]
    return Hit(
        segment_id=segment["id"],
        score=float(record["score"]),
        scores=dict(record.get("scores") or {}),
        ranks=dict(record.get("ranks") or {}),
        content=segment["content"],
        answer=segment.get("answer"),
        document_id=segment["document"]["id"],
        document_name=segment["document"]["name"],
        dataset_id=record["dataset"]["id"],
        position=int(segment["position"]) - 1,
        metadata=dict(segment.get("metadata") or {}),
    )
