"""The settings of a Qdrant server or cluster, kept apart from the client so that reading them
imports nothing heavy."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from zhiku.core.secrets import Secret

if TYPE_CHECKING:
    from qdrant_client import QdrantClient


@dataclass(frozen=True)
class QdrantServer:
    """How to reach a Qdrant server or cluster, and how to lay out the collections zhiku creates
    there: ``api_key`` (Qdrant Cloud; a :class:`Secret`, revealed only to the client), ``https``
    (None: as the URL says), ``timeout`` seconds per request, gRPC when ``prefer_grpc``, and
    ``shard_number`` / ``replication_factor`` for new collections (None: the server's defaults)."""

    api_key: Secret | None = None
    https: bool | None = None
    timeout: float = 10.0
    prefer_grpc: bool = False
    shard_number: int | None = None
    replication_factor: int | None = None

    def client(self, url: str) -> QdrantClient:
        from qdrant_client import QdrantClient

        return QdrantClient(
            url=url,
            api_key=self.api_key.reveal() if self.api_key is not None else None,
            https=self.https,
            timeout=max(1, round(self.timeout)),
            prefer_grpc=self.prefer_grpc,
        )
